#!/bin/bash
# On the model-167 machine: ResNet-18 at 128 px, one thread, batch 16, fp32 and bf16 (peer: channels_last and compile, its two best at this size in the run before),
# rounds interleaved (a PyTorch training run stopped meanwhile).
cd /work/main
date; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
python3 scripts/bench/bench_step.py --net resnet18 --input-size 128 --batches 16 --rounds 3 --threads 1 --modes channels_last compile --precisions fp32 bf16
date
