#!/bin/bash
# Interleaved rounds: crossbow_bench (2 learners, SMA) and bench_step's Crossbow worker (one
# thread, batch 16, fp32), the tree before the layered redesign (wtbase) against main.
set -u
out=/work/runs/bench35.jsonl; : > $out
for tree in wtbase main; do
  (cd /work/$tree && PYTHONPATH=/work/pyshim:/work/$tree/python python3 -m crossbow spec --net resnet32 --output /work/runs/resnet32_$tree.json)
done
for round in 1 2 3 4 5; do
  for tree in wtbase main; do
    ips=$(/work/$tree/build/crossbow_bench --spec /work/runs/resnet32_$tree.json --batch_size 16 --learners 2 --sync sma --seconds 8 2>/dev/null | tail -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['images_per_s'])")
    step=$(cd /work/$tree && OMP_NUM_THREADS=1 PYTHONPATH=/work/pyshim:/work/$tree/python python3 scripts/bench/bench_step.py --worker crossbow --batches 16 --threads 1 --precisions fp32 2>/dev/null | tail -1 | python3 -c "import json,sys,statistics; print(statistics.median(json.loads(sys.stdin.read())['times'])*1e3)")
    echo "{\"round\": $round, \"tree\": \"$tree\", \"crossbow_bench_images_per_s\": $ips, \"bench_step_ms_median\": $step}" | tee -a $out
  done
done
