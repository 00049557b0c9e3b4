#!/bin/bash
# On the model-167 machine: ResNet-32, one thread, batch 16, fp32 and bf16, against
# PyTorch's three modes, rounds interleaved; after seed1.py, nothing else running.
while pgrep -f seed1.py > /dev/null; do sleep 5; done
cd /work/main
date; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
python3 scripts/bench/bench_step.py --batches 16 --rounds 3 --threads 1 --precisions fp32 bf16
date
