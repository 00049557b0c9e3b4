#!/bin/bash
# The quiet-machine benchmarks on the model-167 Xeon, one after
# another. BEFORE: a copy of the tree before e1f41a1 (python/ scripts/ nets/ and build/'s
# libraries) for the max pool's A/B; OUT: where the output goes.
cd "$(dirname "$0")/../../../.."
out=${OUT:-docs/results/cpu_speed/xeon_model167}
hdr() { date -u; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo; }
ab=docs/results/cpu_speed/xeon_model167/fp32_ab.sh
{ hdr; ITERS=40 bash $ab ${BEFORE:?} 5 bf16 resnet18 128; date -u; } > $out/maxpool_ab_resnet18_128_bf16.txt 2>&1
{ hdr; ITERS=20 bash $ab ${BEFORE:?} 5 bf16 resnet18 224; date -u; } > $out/maxpool_ab_resnet18_224_bf16.txt 2>&1
{ hdr; python3 scripts/bench/bench_step.py --net resnet18 --input-size 128 --batches 16 --rounds 3 --threads 1 --modes channels_last compile --precisions fp32 bf16; date -u; } > $out/bench_step_resnet18_128_maxpool.txt 2>&1
{ hdr; python3 scripts/bench/bench_step.py --net resnet18 --input-size 224 --batches 16 --rounds 3 --threads 1 --modes channels_last compile --iters 3 --precisions fp32 bf16; date -u; } > $out/bench_step_resnet18_224_maxpool.txt 2>&1
{ hdr; python3 scripts/bench/bench_step.py --net resnet50 --input-size 224 --batches 16 --rounds 3 --threads 1 --modes channels_last compile --iters 2 --precisions fp32 bf16; date -u; } > $out/bench_step_resnet50_224.txt 2>&1
for p in bf16 fp32; do
  { hdr; python3 scripts/bench/bench_train.py hardware --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision $p; date -u; } > $out/train_hardware_resnet32_$p.txt 2>&1
done
{ hdr; python3 scripts/bench/bench_train.py hardware --net resnet50 --input-size 128 --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision bf16; date -u; } > $out/train_hardware_resnet50_128_bf16.txt 2>&1
{ hdr; python3 scripts/bench/bench_train.py hardware --net resnet18 --input-size 128 --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision bf16; date -u; } > $out/train_hardware_resnet18_128_bf16.txt 2>&1
