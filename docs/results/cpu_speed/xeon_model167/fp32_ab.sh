#!/bin/bash
# A/B of Crossbow's ResNet-32 fp32 step (one thread, batch 16) between a BEFORE tree (python/,
# scripts/, build/ libraries: LD_LIBRARY_PATH wins over the module's RUNPATH) and /work/main;
# rounds interleaved; then each tree's oneDNN time by shape.  bash ab.sh BEFORE ROUNDS [PRECISION] [NET SIZE]
before=$1 rounds=${2:-5} precision=${3:-fp32} net=${4:-resnet32} size=${5:--}
size_flag=(); [ "$size" != "-" ] && size_flag=(--input-size "$size")
shim=$(mktemp -d); trap 'rm -rf "$shim"' EXIT
echo 'import sys; sys.meta_path[:] = [f for f in sys.meta_path if "_editable" not in type(f).__module__]' > "$shim/sitecustomize.py"
echo "# $(date -u), $(grep -m1 '^model\s' /proc/cpuinfo), $net $size $precision, after $(git -C /work/main rev-parse --short HEAD) + $(git -C /work/main diff --stat | tail -1)"
run() { PYTHONPATH=$shim:$1/python LD_LIBRARY_PATH=$1/build OMP_NUM_THREADS=1 python3 "$1/scripts/bench/bench_step.py" --worker crossbow --net $net "${size_flag[@]}" --batches 16 --precisions $precision --iters ${ITERS:-40} "${@:2}"; }
for r in $(seq $rounds); do
  for t in $before /work/main; do
    echo "round $r $t $(run $t | python3 -c "import json,sys,statistics;print('%.2f' % (1e3*statistics.median(json.load(sys.stdin)['times'])))") ms"
  done
done
if [ -n "$SHAPES" ]; then
  for t in $before /work/main; do
    echo "== $t by shape"
    PYTHONPATH=$shim:$t/python LD_LIBRARY_PATH=$t/build OMP_NUM_THREADS=1 python3 /work/main/scripts/bench/onednn_breakdown.py --steps $((${ITERS:-40}+3)) --warmup 3 --by-shape -- python3 $t/scripts/bench/bench_step.py --worker crossbow --net $net "${size_flag[@]}" --batches 16 --precisions $precision --iters ${ITERS:-40} | head -${SHAPES}
  done
fi
