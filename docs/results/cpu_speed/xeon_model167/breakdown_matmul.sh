#!/bin/bash
# oneDNN's primitives by shape in ResNet-18's bf16 step at 128 px
# after MatmulConv, then oneDNN's total in ResNet-50's at 128 px before (f7bc267's build, the
# same C++ as 4927b9b) and after; one thread, batch 16.
cd "$(dirname "$0")/../../../.."
shim=$(mktemp -d); trap 'rm -rf "$shim"' EXIT
echo 'import sys; sys.meta_path[:] = [f for f in sys.meta_path if "_editable" not in type(f).__module__]' > "$shim/sitecustomize.py"
B="python3 /work/main/scripts/bench/onednn_breakdown.py --warmup 3"
date -u; git rev-parse --short HEAD; grep -m1 "^model\s" /proc/cpuinfo
echo "== ResNet-18 128 bf16, after, by shape"
OMP_NUM_THREADS=1 $B --steps 9 --by-shape -- python3 scripts/bench/bench_step.py --net resnet18 --input-size 128 --batches 16 --threads 1 --precisions bf16 --iters 6 --worker crossbow | head -40
for t in /work/ci_check /work/main; do
  echo "== ResNet-50 128 bf16, $t, by pass"
  PYTHONPATH=$shim:$t/python LD_LIBRARY_PATH=$t/build OMP_NUM_THREADS=1 $B --steps 7 -- python3 $t/scripts/bench/bench_step.py --net resnet50 --input-size 128 --batches 16 --threads 1 --precisions bf16 --iters 4 --worker crossbow
done
date -u
