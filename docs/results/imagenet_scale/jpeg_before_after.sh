#!/bin/bash
# The partial JPEG decode, before (5d67ab9~1) and after (main) in one run: images/s per core,
# ImageNet-like JPEGs -> RandomResizedCrop 224 + flip + normalise, full-resolution decode, 1 worker.
P=$(pgrep -f "crossbow train --net resnet18"); [ -n "$P" ] && kill -STOP $P
echo "# $(date -u), $(grep -m1 'model name' /proc/cpuinfo), before = $(git -C /work/wtbase rev-parse --short HEAD), after = $(git -C /work/main rev-parse --short HEAD)"
for round in 1 2 3 4 5; do
  for tree in wtbase main; do
    rate=$(PYTHONPATH=/work/pyshim:/work/$tree/python python3 docs/results/imagenet_scale/jpegrate.py /work/runs/bench_in/jpeg_2000_1.0 224 2048 2>/dev/null | tail -1)
    echo "round $round $tree $rate"
  done
done
[ -n "$P" ] && kill -CONT $P
