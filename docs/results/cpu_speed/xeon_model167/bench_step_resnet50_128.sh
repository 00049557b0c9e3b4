#!/bin/bash
# On the model-167 machine: ResNet-50 at 128 px, one thread, batch 16, bf16 and fp32.
cd /work/main
date; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
python3 scripts/bench/bench_step.py --net resnet50 --input-size 128 --batches 16 --rounds 3 --threads 1 --precisions fp32 bf16
date
