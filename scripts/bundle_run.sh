#!/usr/bin/env bash
# The launcher of a GPU bundle (scripts/bundle_gpu.sh copies it in as BUNDLE/run): runs one of
# the bundle's programs with the bundle's libraries.
#
#   BUNDLE/run crossbow_bench --spec BUNDLE/specs/resnet32.json --devices cuda:0
#   BUNDLE/run --check      says whether every program finds every library; exit 1 if not
#
# CUDA's libraries (runtime, cuBLAS, cuDNN, NCCL) come from the machine: where the loader looks
# anyway, else CUDA_HOME, /usr/local/cuda*, or the nvidia/ and torch/lib folders of Python's
# site-packages (pip's CUDA wheels, as PyTorch installs them). libstdc++, libgcc_s and libgomp
# come from the machine too, unless it lacks a version the programs need: then the bundle's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

missing() {  # the libraries that the bundle's programs do not find
  local program
  for program in "$here"/bin/*; do ldd "$program" 2>&1 | awk '/=> not found/ {print $1}'; done |
    sort -u
}

cuda_dirs() {  # folders that may hold CUDA's libraries, most specific first
  local d
  for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} /usr/local/cuda/lib64 \
    /usr/local/cuda/lib /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do
    if [ -d "$d" ]; then echo "$d"; fi
  done
  local python
  python=$(command -v python3 || true)
  [ -n "$python" ] || return 0
  "$python" -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
    2>/dev/null | while read -r sp; do
    for d in "$sp"/nvidia/*/lib "$sp"/nvidia/*/*/lib "$sp"/torch/lib; do
      if [ -d "$d" ]; then echo "$d"; fi
    done
  done
  return 0
}

# Adds the first folder that holds each missing library until none is missing or none helps.
find_cuda_libraries() {
  local dirs lib d added
  dirs=$(cuda_dirs)
  for _ in 1 2 3 4; do
    added=0
    for lib in $(missing); do
      for d in $dirs; do
        if [ -e "$d/$lib" ]; then
          case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" added=1 ;; esac
          break
        fi
      done
    done
    [ $added = 1 ] || break
  done
}

[ -z "$(missing)" ] || find_cuda_libraries
if ldd "$here"/bin/* 2>&1 | grep -q "version .* not found"; then
  LD_LIBRARY_PATH="$here/lib/compat:$LD_LIBRARY_PATH"
fi

if [ "${1:-}" = "--check" ]; then
  absent=$(missing)
  if [ -n "$absent" ] || ldd "$here"/bin/* 2>&1 | grep -q "version .* not found"; then
    echo "bundle $here: libraries not found: ${absent:-none}" >&2
    ldd "$here"/bin/* 2>&1 | grep "version .* not found" >&2 || true
    echo "searched: LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >&2
    exit 1
  fi
  echo "bundle $here: every library found (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  exit 0
fi
if [ $# -lt 1 ] || [ ! -x "$here/bin/$1" ]; then
  echo "usage: $0 PROGRAM [ARGS...] | --check; programs: $(ls "$here/bin" | tr '\n' ' ')" >&2
  exit 2
fi
program=$here/bin/$1
shift
exec "$program" "$@"
