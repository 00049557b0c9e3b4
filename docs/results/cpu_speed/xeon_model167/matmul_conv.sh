#!/bin/bash
# The benchmarks on the model-167 Xeon, nothing else running,
# one after another. AFTER (the working tree, MatmulConv and the four-stream AllFinite, 7d35833
# + 523b511) unless BEFORE=1: then the tree before them, f7bc267's build (the same C++ as
# 4927b9b), through a shim that hides the editable install. OUT: where the output goes.
cd "$(dirname "$0")/../../../.."
out=${OUT:-docs/results/cpu_speed/xeon_model167}
tree=/work/main suffix=matmul env=()
if [ -n "$BEFORE" ]; then
  shim=$(mktemp -d); trap 'rm -rf "$shim"' EXIT
  echo 'import sys; sys.meta_path[:] = [f for f in sys.meta_path if "_editable" not in type(f).__module__]' > "$shim/sitecustomize.py"
  tree=/work/ci_check suffix=before_matmul env=(PYTHONPATH=$shim:$tree/python LD_LIBRARY_PATH=$tree/build)
fi
hdr() { date -u; git -C $tree rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo; }
{ hdr; env "${env[@]}" python3 $tree/scripts/bench/bench_step.py --net resnet18 --input-size 128 --batches 16 --rounds 3 --threads 1 --precisions fp32 bf16; date -u; } > $out/bench_step_resnet18_128_$suffix.txt 2>&1
{ hdr; env "${env[@]}" python3 $tree/scripts/bench/bench_train.py hardware --net resnet18 --input-size 128 --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision bf16; date -u; } > $out/train_hardware_resnet18_128_bf16_$suffix.txt 2>&1
[ -n "$BEFORE" ] || { hdr; python3 scripts/bench/bench_train.py hardware --net resnet50 --input-size 128 --work /tmp/bench33 --rounds 2 --seconds 30 --peer-batches 16 64 --modes channels_last compile --precision bf16; date -u; } > $out/train_hardware_resnet50_128_bf16_matmul.txt 2>&1
# The step alone, before (f7bc267's build) against after, rounds interleaved (matmul_ab_nets.txt):
[ -n "$BEFORE" ] || for spec in "resnet18 128 12" "resnet50 128 8" "resnet32 - 30" "resnet18 224 6" "resnet50 224 4"; do
  set -- $spec; echo "## $1 $2, ITERS $3"; ITERS=$3 bash $out/fp32_ab.sh /work/ci_check 4 bf16 $1 $2
done > $out/matmul_ab_nets.txt 2>&1
