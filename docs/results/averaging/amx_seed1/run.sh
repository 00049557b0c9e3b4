#!/bin/bash
cd /work/main/scripts
exec python3 bench_averaging.py --work /work/runs/s14/averaging --precision bf16 --seed 1 --resume \
  --runs sma-k2-lr-sqrtk-alpha-1n ssgd-k4-lr-sqrtk sma-k4
