#!/bin/bash
# ResNet-32 bf16, one learner, one thread, synthetic data: the same tree built with
# PrefersAmxWeightGradient off (before) and on (after), rounds alternating; the PyTorch
# 164-epoch run paused meanwhile.
cd /work/main && python3 -c "
import json; from crossbow import nets
print(json.dumps(nets.builder('resnet32', 10).to_spec(precision='bf16')))" > /work/runs/s13/r32.json
kill -STOP $(pgrep -f "bench_train.py statistical|torch_tta.py")
trap 'kill -CONT $(pgrep -f "bench_train.py statistical|torch_tta.py")' EXIT
export OMP_NUM_THREADS=1
for r in 1 2 3 4 5 6; do
  for v in before after; do
    echo -n "round $r $v "
    LD_LIBRARY_PATH=/work/runs/s13/$v /work/runs/s13/crossbow_bench --spec /work/runs/s13/r32.json \
      --precision bf16 --batch_size 16 --learners 1 --devices cpu --seconds 8 \
      --warmup_iterations 10 2>/dev/null | python3 -c "import sys,json; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['images_per_s'])"
  done
done
