#!/bin/bash
# One learner's step (bench_step's Crossbow worker: forward + backward + update, one thread,
# batch 16) in two trees, rounds interleaved: BEFORE and AFTER are checkouts with their own
# build, each run with its own python/ first on PYTHONPATH (a sitecustomize.py made here drops
# the finder of an editable install, which would otherwise win over PYTHONPATH). A training run
# named by PAUSE (a pid) is stopped meanwhile and continued however the script ends; a failing
# worker stops the script. SIZE "-" leaves a CIFAR net at its own input size.
#   bash step_before_after.sh BEFORE AFTER NET SIZE PRECISION [ROUNDS] [PAUSE]
set -eo pipefail
before=$1 after=$2 net=$3 size=$4 precision=$5 rounds=${6:-5} pause=$7
size_flag=(); [ "$size" != "-" ] && size_flag=(--input-size "$size")
shim=$(mktemp -d)
trap 'rm -rf "$shim"; [ -z "$pause" ] || kill -CONT "$pause"' EXIT
echo 'import sys; sys.meta_path[:] = [f for f in sys.meta_path if "_editable" not in type(f).__module__]' \
  > "$shim/sitecustomize.py"
[ -n "$pause" ] && kill -STOP "$pause"
echo "# $(date -u), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $net at $size px, $precision," \
     "before $(git -C "$before" rev-parse --short HEAD), after $(git -C "$after" rev-parse --short HEAD)" \
     "($(git -C "$after" status --short | wc -l) files changed in the after tree)"
for round in $(seq "$rounds"); do
  for tree in "$before" "$after"; do
    ms=$(PYTHONPATH=$shim:$tree/python OMP_NUM_THREADS=1 python3 "$tree/scripts/bench/bench_step.py" \
         --worker crossbow --net "$net" "${size_flag[@]}" --batches 16 --precisions "$precision" \
         --iters 8 | python3 -c "import json,sys,statistics;print('%.1f' % (1e3*statistics.median(json.load(sys.stdin)['times'])))")
    echo "round $round $tree $ms ms"
  done
done
