#!/bin/bash
# amx_dw_probe.py (one-convolution nets, bf16, one thread, batch 16) in two builds A and B,
# three rounds interleaved; each build is a folder with python/, scripts/, nets/ and build/'s
# libraries (LD_LIBRARY_PATH wins over the module's RUNPATH).
#   bash amx_dw_probe_ab.sh A B "CxH ..."
# amx_dw_probe_ab.txt: A with the AMX weight-gradient kernel everywhere (fd25dd9), B without
# it, shapes "16x32 32x16 64x8 64x32 128x16 256x8 512x4 64x56 128x28 256x14 512x7";
# amx_blocked_probe_ab_*.txt: A the 4 MiB rule (the commit after fd25dd9), B the products
# blocked over K (amx_blocked_kernel.diff, kBlockBytes 256 KiB, 1 MiB, 2 MiB), shapes
# "64x32 128x28 64x56 256x14 128x16".
a=$1 b=$2 shapes=$3
probe=$(dirname "$(readlink -f "$0")")/amx_dw_probe.py
shim=$(mktemp -d); trap 'rm -rf "$shim"' EXIT
echo 'import sys; sys.meta_path[:] = [f for f in sys.meta_path if "_editable" not in type(f).__module__]' > "$shim/sitecustomize.py"
echo "# $(date -u) $(grep -m1 '^model\s' /proc/cpuinfo)"
for r in 1 2 3; do
  for t in "$a" "$b"; do
    PYTHONPATH=$shim:$t/python LD_LIBRARY_PATH=$t/build OMP_NUM_THREADS=1 python3 "$probe" $shapes | sed "s|^|round $r $(basename "$t") |"
  done
done
