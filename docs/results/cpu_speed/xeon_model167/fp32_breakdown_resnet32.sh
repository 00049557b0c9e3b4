#!/bin/bash
# where ResNet-32's fp32 step goes, one thread, batch 16, both sides (the fp32 gap).
cd /work/main
P=/root/.cache/crossbow/peer-venv/bin/python
date; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
B="python3 scripts/bench/onednn_breakdown.py --steps 43 --warmup 3"
W="scripts/bench/bench_step.py --batches 16 --threads 1 --precisions fp32 --iters 40"
for r in 1 2; do
  echo "== crossbow round $r"; OMP_NUM_THREADS=1 $B -- python3 $W --worker crossbow
  for m in channels_last compile; do
    echo "== torch $m round $r"
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=scripts $B -- $P $W --worker torch --modes $m
  done
done
echo "== crossbow by shape"; OMP_NUM_THREADS=1 $B --by-shape -- python3 $W --worker crossbow
echo "== torch channels_last by shape"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=scripts $B --by-shape -- $P $W --worker torch --modes channels_last
echo "== step times (no verbose)"
for r in 1 2; do
  OMP_NUM_THREADS=1 python3 $W --worker crossbow | python3 -c "import json,sys,statistics as s; d=json.loads(sys.stdin.read().splitlines()[-1]); print('crossbow median ms', 1e3*s.median(d['times']))"
  for m in channels_last compile; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=scripts $P $W --worker torch --modes $m | python3 -c "import json,sys,statistics as s; d=json.loads(sys.stdin.read().splitlines()[-1]); print('torch $m median ms', 1e3*s.median(d['times']))"
  done
done
date
