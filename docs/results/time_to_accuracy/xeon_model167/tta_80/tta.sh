#!/bin/bash
# On a new machine (Intel Xeon with AMX, family 6 model 167): 80%, each side's two drop
# sets at the budgets that were fastest to 80% before (PyTorch 12 epochs, Crossbow 15), sides
# alternating, PyTorch in torch.compile (its fastest mode in every earlier set); a fresh search
# with the confirmed adds of 07acf79; nothing else running.
cd /work/main
S="python3 scripts/bench/bench_train.py statistical --work /work/runs/tta_amx167 --precision bf16 --resume --targets 0.8"
date; git rev-parse --short HEAD; git status --short; grep -m1 "model name" /proc/cpuinfo; grep -m1 "^model\s" /proc/cpuinfo
$S --epochs 12 --recipes he-b128 --modes compile; date
$S --epochs 15 --recipes sma-b16; date
$S --epochs 12 --recipes goyal-b128 --modes compile; date
$S --epochs 15 --recipes sma-b16-he; date
