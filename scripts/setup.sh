#!/usr/bin/env bash
# Installs what Crossbow needs (Debian and Python packages) where missing, builds everything
# into build/, and installs the Python package in development mode, so that `import crossbow`,
# `python3 -m crossbow` and `crossbow` work from anywhere. Idempotent, and quiet when there is
# nothing to do. PYTHON picks the interpreter (default: python3 on PATH).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=$(command -v "${PYTHON:-python3}")
log="$root/build/setup.log"
mkdir -p "$root/build"
: >"$log"

say() { echo "[setup] $*" >&2; }
run_logged() { "$@" >>"$log" 2>&1 || { tail -n 40 "$log" >&2; say "failed: $*"; exit 1; }; }
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

debian_packages=(cmake make g++ pkg-config libdnnl-dev libgoogle-glog-dev libgflags-dev
  nlohmann-json3-dev pybind11-dev libgtest-dev zlib1g-dev liblmdb-dev libopencv-core-dev
  libopencv-imgcodecs-dev libopencv-imgproc-dev libjpeg62-turbo-dev clang libclang-rt-14-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  run_logged sudo_if_needed apt-get update -qq
  run_logged sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# name to import: name on PyPI. Tests, plots (matplotlib), TensorBoard events (tensorboardX
# writes, tensorboard reads and shows them), ONNX export (onnx, onnxruntime checks it), and
# the build backend of the development install below (scikit-build-core).
python_packages=(numpy:numpy pytest:pytest lmdb:lmdb google.protobuf:protobuf PIL:pillow
  matplotlib:matplotlib tensorboardX:tensorboardX tensorboard:tensorboard onnx:onnx
  onnxruntime:onnxruntime scikit_build_core:scikit-build-core)
read -r -a missing <<<"$("$py" -c '
import importlib.util, sys
def absent(name):
    try:
        return importlib.util.find_spec(name) is None
    except ImportError:  # its parent package is absent
        return True
print(" ".join(p.split(":")[1] for p in sys.argv[1:] if absent(p.split(":")[0])))' \
  "${python_packages[@]}")"
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Python packages: ${missing[*]}"
  run_logged "$py" -m pip install -q "${missing[@]}"
fi

if [ ! -f "$root/build/CMakeCache.txt" ]; then
  say "configuring build/"
  run_logged cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$py"
fi
run_logged cmake --build "$root/build" -j "$(nproc)"

if ! (cd / && "$py" -c "import crossbow, os, sys; sys.exit(os.path.dirname(crossbow.__file__) != '$root/python/crossbow')") 2>/dev/null \
   || ! command -v crossbow >/dev/null; then
  # Editable, and without CMake (wheel.cmake=false): build/ above is the one C++ build, and
  # its module lands in python/crossbow. `pip install .` builds a wheel through CMake instead.
  say "installing the crossbow Python package (editable)"
  run_logged "$py" -m pip install -q --no-build-isolation --config-settings=wheel.cmake=false \
    -e "$root"
  command -v pyenv >/dev/null && pyenv rehash 2>/dev/null || true
fi
