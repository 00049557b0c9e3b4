#!/bin/bash
# One learner's step (bench_step's Crossbow worker: forward + backward + update, one thread,
# batch 16) in two trees, rounds interleaved: BEFORE and AFTER are checkouts with their own
# build, each run with its own python/ first on PYTHONPATH. A training run named by PAUSE (a pid)
# is stopped meanwhile.
#   bash step_before_after.sh BEFORE AFTER NET SIZE PRECISION [ROUNDS] [PAUSE]
before=$1 after=$2 net=$3 size=$4 precision=$5 rounds=${6:-5} pause=$7
[ -n "$pause" ] && kill -STOP "$pause"
echo "# $(date -u), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $net at $size px, $precision," \
     "before $(git -C "$before" rev-parse --short HEAD), after $(git -C "$after" rev-parse --short HEAD)" \
     "($(git -C "$after" status --short | wc -l) files changed in the after tree)"
for round in $(seq "$rounds"); do
  for tree in "$before" "$after"; do
    ms=$(PYTHONPATH=/work/pyshim:$tree/python OMP_NUM_THREADS=1 python3 "$tree/scripts/bench_step.py" \
         --worker crossbow --net "$net" --input-size "$size" --batches 16 --precisions "$precision" \
         --iters 8 | python3 -c "import json,sys,statistics;print('%.1f' % (1e3*statistics.median(json.load(sys.stdin)['times'])))")
    echo "round $round $tree $ms ms"
  done
done
[ -n "$pause" ] && kill -CONT "$pause"
