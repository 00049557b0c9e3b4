#!/usr/bin/env bash
# The launcher of a GPU bundle (scripts/gpu/bundle_gpu.sh copies it in as BUNDLE/run): runs one of
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

add_path() {  # appends folder $1 to LD_LIBRARY_PATH; fails if it is there already
  case ":$LD_LIBRARY_PATH:" in *":$1:"*) return 1 ;; esac
  LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$1"
}

site_packages() {
  local python
  python=$(command -v python3 || true)
  [ -z "$python" ] || "$python" -c \
    'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
    2>/dev/null || true
}

cuda_dirs() {  # folders that may hold CUDA's libraries, most specific first
  local d sp
  for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} /usr/local/cuda/lib64 \
    /usr/local/cuda/lib /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do
    if [ -d "$d" ]; then echo "$d"; fi
  done
  for sp in $(site_packages); do
    for d in "$sp"/nvidia/*/lib "$sp"/nvidia/*/*/lib "$sp"/torch/lib; do
      if [ -d "$d" ]; then echo "$d"; fi
    done
  done
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
          if add_path "$d"; then added=1; fi
          break
        fi
      done
    done
    [ $added = 1 ] || break
  done
}

version_missing() { ldd "$here"/bin/* 2>&1 | grep "version .* not found"; }

[ -z "$(missing)" ] || find_cuda_libraries
# cuDNN opens its sub-libraries (libcudnn_cnn.so.9, ...) by name at run time: the folders where
# CUDA's libraries were found go on the path too, however the loader found them.
for d in $(ldd "$here"/bin/* 2>/dev/null |
  awk '$1 ~ /^lib(cudnn|cublas|cudart|nccl)/ && $3 ~ /^\// {print $3}' | xargs -r -n1 dirname); do
  add_path "$d" || true
done
if version_missing >/dev/null; then LD_LIBRARY_PATH="$here/lib/compat:$LD_LIBRARY_PATH"; fi

if [ "${1:-}" = "--check" ]; then
  absent=$(missing)
  if [ -n "$absent" ] || version_missing >/dev/null; then
    echo "bundle $here: libraries not found: ${absent:-none}" >&2
    version_missing >&2 || true
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
