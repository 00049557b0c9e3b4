#!/usr/bin/env bash
# Makes the benchmarks' peer: a virtual environment with current torch and torchvision from PyPI
# and fastai (pinned below: the recipes' peer), in the folder `scripts/peer/peer.py --venv` names
# (~/.cache/crossbow/peer-venv, or $CROSSBOW_PEER_VENV). Idempotent: a venv whose torch,
# torchvision and pinned fastai import is left as it is.
# Prints the peer's python on the last line; every benchmark uses it by default once it exists.
# PYTHON picks the interpreter the venv is made from (default: python3 on PATH).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=$(command -v "${PYTHON:-python3}")
venv=$("$base" "$root/scripts/peer/peer.py" --venv)
py="$venv/bin/python"
say() { echo "[setup_peer] $*" >&2; }
fastai_version=2.8.12

if [ -x "$py" ] && "$py" -c "import torch, torchvision, fastai, sys
sys.exit(fastai.__version__ != '$fastai_version')" 2>/dev/null; then
  say "up to date: $venv"
else
  say "creating $venv from $base"
  "$base" -m venv "$venv"
  "$py" -m pip install --quiet --upgrade pip
  # The CUDA libraries that PyPI's wheel depends on are installed but never loaded on a CPU run.
  # fastai's own pins choose the torch it supports.
  "$py" -m pip install --quiet --upgrade torch torchvision numpy "fastai==$fastai_version"
fi
"$py" -c "import torch, torchvision, fastai; print('[setup_peer] torch', torch.__version__, \
'torchvision', torchvision.__version__, 'fastai', fastai.__version__)" >&2
echo "$py"
