#!/bin/bash
# where ResNet-18's bf16 step at 128 px goes, one thread,
# batch 16, Crossbow's side: oneDNN's primitives by pass and by shape (breakdown_resnet18_128_bf16.txt),
# then the whole process sampled by perf, per symbol (perf_resnet18_128_bf16.txt; oneDNN's JIT
# kernels named through ONEDNN_JIT_PROFILE), then the step time alone.
cd "$(dirname "$0")/../../../.."
W="scripts/bench/bench_step.py --net resnet18 --input-size 128 --batches 16 --threads 1 --precisions bf16"
B="python3 scripts/bench/onednn_breakdown.py --steps 9 --warmup 3"
(date; OMP_NUM_THREADS=1 $B -- python3 $W --iters 6 --worker crossbow
 OMP_NUM_THREADS=1 $B --by-shape -- python3 $W --iters 6 --worker crossbow; date)
ONEDNN_JIT_PROFILE=6 OMP_NUM_THREADS=1 perf record -F 1999 -o /tmp/perf.data -- python3 $W --iters 20 --worker crossbow
# 23 steps (3 warm-up, 20 timed) plus set-up: ms per step = samples / 1999 / 23 * 1000, an upper bound
perf report -i /tmp/perf.data --sort sym --stdio -n | grep -v "^#" | grep -v "^$" | head -60
OMP_NUM_THREADS=1 python3 $W --iters 6 --worker crossbow
