#!/bin/bash
# PyTorch ResNet-20, He et al.'s published recipe at its full 164 epochs on the CIFAR-10 JPEGs
# (the data's ceiling). The same command resumes from the checkpoint in WORK.
cd "$(dirname "$0")/../.."
exec python3 scripts/bench/bench_train.py statistical \
  --work "${WORK:-/tmp/torch-he-resnet20-164ep}" --precision bf16 --resume --epochs 164 \
  --recipes he-b128 --modes compile --targets 0.99
