#!/bin/bash
# dw_probe.py in two builds, rounds interleaved: ON (the AMX weight-gradient kernel, /work/runs/s16/amx_on)
# and OFF (/work/main with PrefersAmxWeightGradient false): per shape, the step of a one-conv net.
shim=$(mktemp -d); echo "import sys; sys.meta_path[:] = [f for f in sys.meta_path if \"_editable\" not in type(f).__module__]" > $shim/sitecustomize.py
S="16x32 32x16 64x8 64x32 128x16 256x8 512x4 64x56 128x28 256x14 512x7"
echo "# $(date -u) $(grep -m1 '^model\s' /proc/cpuinfo)"
for r in 1 2 3; do
  for t in /work/runs/s16/amx_on /work/main; do
    PYTHONPATH=$shim:$t/python LD_LIBRARY_PATH=$t/build OMP_NUM_THREADS=1 python3 docs/results/issue33/amx167/amx_dw_probe.py $S | sed "s|^|round $r $(basename $t) |"
  done
done
