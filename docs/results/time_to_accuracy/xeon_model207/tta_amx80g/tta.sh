#!/bin/bash
# a seventh AMX set, after alpha auto became 1/N and the autotuner's windows 2 s:
# each side's fastest recipe to 80% in the fifth and sixth sets (PyTorch he-b128 compile at 12
# epochs, Crossbow sma-b16 at 15); PyTorch first; nothing else running (the averaging study
# stopped with SIGSTOP).
cd /work/main
S="python3 scripts/bench/bench_train.py statistical --work /work/runs/tta_amx80g --precision bf16 --resume"
date; git rev-parse --short HEAD; git status --short; grep -m1 "model name" /proc/cpuinfo
$S --targets 0.8 --epochs 12 --recipes he-b128 --modes compile; date
$S --targets 0.8 --epochs 15 --recipes sma-b16; date
