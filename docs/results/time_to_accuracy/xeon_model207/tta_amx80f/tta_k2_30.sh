#!/bin/bash
# sma-b16 at 30 epochs (targets 80 and 85%) with the learner count fixed at the fifth set's 2 (the search's
# entry in tta_learners.json edited by hand), to separate the new kernel's speed from the
# autotuner's new choice of 4 learners; the PyTorch 164-epoch run paused.
cd /work/main
kill -STOP $(pgrep -f "bench_train.py statistical --work /work/runs/i34|torch_tta.py.*i34")
trap 'kill -CONT $(pgrep -f "bench_train.py statistical --work /work/runs/i34|torch_tta.py.*i34")' EXIT
date; git rev-parse --short HEAD
python3 scripts/bench/bench_train.py statistical --work /work/runs/tta_amx80f --precision bf16 --resume --targets 0.8 0.85 --epochs 30 --recipes sma-b16; date
