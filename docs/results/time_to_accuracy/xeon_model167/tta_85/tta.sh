#!/bin/bash
# On the model-167 machine: 85% (and 80%) at a 30-epoch budget, each side's two drop
# sets (Crossbow sma-b16-he and sma-b16, PyTorch he-b128 and goyal-b128 in torch.compile), sides
# alternating, right after tta_a.sh; the search of tta_a.sh's sma-b16 (2 learners) kept for
# every Crossbow run; nothing else running.
cd /work/main
S="python3 scripts/bench/bench_train.py statistical --work /work/runs/tta_amx167 --precision bf16 --resume --targets 0.8 0.85 --epochs 30"
date; git rev-parse --short HEAD; git status --short; grep -m1 "^model\s" /proc/cpuinfo
$S --recipes sma-b16-he; date
$S --recipes he-b128 --modes compile; date
$S --recipes sma-b16; date
$S --recipes goyal-b128 --modes compile; date
