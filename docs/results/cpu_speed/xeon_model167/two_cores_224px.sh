#!/bin/bash
# The quiet-machine benchmarks on the model-167 Xeon: the two-core
# rows at 224 px, the last rows of the targets' table not yet measured here. OUT: where the output goes.
cd "$(dirname "$0")/../../../.."
out=${OUT:-docs/results/cpu_speed/xeon_model167}
hdr() { date -u; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo; }
for net in resnet18 resnet50; do
  { hdr; python3 scripts/bench/bench_train.py hardware --net $net --input-size 224 --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision bf16; date -u; } > $out/train_hardware_${net}_224_bf16.txt 2>&1
done
