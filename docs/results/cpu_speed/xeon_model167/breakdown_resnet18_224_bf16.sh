#!/bin/bash
# Model 167: where ResNet-18's bf16 step at 224 px goes, one thread, batch 16, both
# sides, by pass and then by shape (a PyTorch training run stopped meanwhile).
cd /work/main
P=/root/.cache/crossbow/peer-venv/bin/python
date; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
B="python3 scripts/bench/onednn_breakdown.py --steps 9 --warmup 3"
W="scripts/bench/bench_step.py --net resnet18 --input-size 224 --batches 16 --threads 1 --precisions bf16 --iters 6"
echo "== crossbow"; OMP_NUM_THREADS=1 $B -- python3 $W --worker crossbow
echo "== torch channels_last"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=scripts $B -- $P $W --worker torch --modes channels_last
echo "== crossbow by shape"; OMP_NUM_THREADS=1 $B --by-shape -- python3 $W --worker crossbow
echo "== torch channels_last by shape"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=scripts $B --by-shape -- $P $W --worker torch --modes channels_last
date
