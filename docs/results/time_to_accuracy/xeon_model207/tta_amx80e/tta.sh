#!/bin/bash
# a sixth AMX set after the AMX weight gradient: each side's fastest recipe to 80% in
# the fifth set (PyTorch he-b128 compile at 12 epochs, Crossbow sma-b16 at 15), then a 30-epoch
# budget a side to 85%; PyTorch first; the PyTorch 164-epoch run paused meanwhile.
cd /work/main
kill -STOP $(pgrep -f "bench_train.py statistical --work /work/runs/i34|torch_tta.py.*i34")
trap 'kill -CONT $(pgrep -f "bench_train.py statistical --work /work/runs/i34|torch_tta.py.*i34")' EXIT
S="python3 scripts/bench/bench_train.py statistical --work /work/runs/tta_amx80e --precision bf16 --resume"
date; git rev-parse --short HEAD; git status --short; grep -m1 "model name" /proc/cpuinfo
$S --targets 0.8 --epochs 12 --recipes he-b128 --modes compile; date
$S --targets 0.8 --epochs 15 --recipes sma-b16; date
$S --targets 0.8 0.85 --epochs 30 --recipes he-b128 --modes compile; date
$S --targets 0.8 0.85 --epochs 30 --recipes sma-b16; date
