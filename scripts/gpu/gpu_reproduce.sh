#!/usr/bin/env bash
# The CIFAR-10 reproductions on a GPU machine that has none of our Debian libraries and not our
# Python module (the GPU rows of docs/reproduction.md), from a bundle of scripts/gpu/bundle_gpu.sh:
#   1. the bundle's CIFAR-10 JPEGs, decoded by Pillow (the machine's, else the bundle's wheel)
#      into the CIFAR-10 binary format and converted by `crossbow_convert cifar10` into raw
#      LMDBs (scripts/datagen/cifar_records.sh): the records `crossbow reproduce` trains on elsewhere
#      (tests/python/test_train_tool.py compares them);
#   2. each of --runs, the bundle's exports of `crossbow reproduce RECIPE --variant V --epochs E
#      --devices cuda:0` (runs/RECIPE-V-Eep; --list shows them), trained in turn by
#      crossbow_train for at most --time-limit seconds of training each, into OUT/RUN/:
#      metrics.jsonl, checkpoints (ckpt/), the result line (result.json), the log (train.log)
#      and reproduce.json (the settings, with this machine: scripts/docs/reproduction_table.py
#      OUT/RUN adds the run to docs/reproduction.md as it does a `crossbow reproduce` folder);
#      --flags adds crossbow_train flags to each (e.g. "--learners 4");
# OUT is --out (else ./reproduce); --pack FILE.tar.gz packs it (not the data or checkpoints),
# for a machine that hands back a few files only. Where $OUT is set (a runner's folder of
# files to hand back), OUT is a folder beside it and the pack $OUT/reproduce.tar.gz unless --out
# and --pack say otherwise: everything measured comes back, the data does not. Running it again
# over the same OUT resumes each run from its checkpoint.
#
#   scripts/gpu/gpu_reproduce.sh --bundle build-gpu/bundle.tar.xz --runs he-resnet32-sma-164ep \
#     --time-limit 420 --out /tmp/reproduce --pack "$OUT/reproduce.tar.gz"
#
# Exit: 0 every run ended; 1 a run failed; 2 usage, or the bundle lacks what a step needs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bundle_unpack.sh
. "$root/scripts/gpu/bundle_unpack.sh"
bundle="" out=$PWD/reproduce pack=""
if [ -n "${OUT:-}" ]; then out=${TMPDIR:-/tmp}/reproduce pack=$OUT/reproduce.tar.gz; fi
runs="he-resnet32-sma-164ep" time_limit="" flags=""
python=${PYTHON:-python3}
usage() {
  echo "usage: $0 --bundle DIR|FILE.tar.xz [--runs '$runs'] [--time-limit SECONDS]" \
    "[--flags 'CROSSBOW_TRAIN FLAGS'] [--out DIR] [--pack FILE.tar.gz] [--list]" >&2
  exit 2
}
list=0
while [ $# -gt 0 ]; do
  case $1 in
    --list) list=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || usage
  case $1 in
    --bundle) bundle=$2 ;;
    --runs) runs=$2 ;;
    --time-limit) time_limit=$2 ;;
    --flags) flags=$2 ;;
    --out) out=$2 ;;
    --pack) pack=$(realpath -m "$2") ;;
    *) usage ;;
  esac
  shift 2
done
[ -n "$bundle" ] || usage
log() { echo "gpu_reproduce [$SECONDS s]: $*" >&2; }
die() { log "$*"; exit 2; }

unpack_bundle "$python" || die "cannot unpack $bundle"
if [ $list = 1 ]; then
  ls "$bundle/runs"
  exit 0
fi
for run in $runs; do
  [ -f "$bundle/runs/$run/spec.json" ] ||
    die "the bundle has no run '$run' (it has: $(ls "$bundle/runs" | tr '\n' ' '))"
done
"$bundle/run" --check >&2 || die "the bundle's programs do not find their libraries"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# 1. The data, once per OUT.
data=$out/data
"$root/scripts/datagen/cifar_records.sh" --jpegs "$bundle/data/cifar10-jpg.tar.gz" --out "$data" \
  --wheels "$bundle/data" -- "$bundle/run" crossbow_convert ||
  die "cannot make the CIFAR-10 records (the bundle needs data/cifar10-jpg.tar.gz)"

# 2. The runs.
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" \
  2>&1 || true
failed=0
for run in $runs; do
  mkdir -p "$out/$run"
  cp "$bundle/runs/$run/options.json" "$out/$run/"
  if [ ! -f "$out/$run/reproduce.json" ]; then  # a resumed run keeps its first start
    "$python" "$root/python/crossbow/machine.py" "$bundle/runs/$run/reproduce.json" \
      "$(cat "$data/train.records")" >"$out/$run/reproduce.json.partial"
    mv "$out/$run/reproduce.json.partial" "$out/$run/reproduce.json"
  fi
  log "$run"
  rc=0
  "$bundle/run" crossbow_train --spec "$bundle/runs/$run/spec.json" \
    --options "$bundle/runs/$run/options.json" --train_db "$data/cifar10_train" \
    --test_db "$data/cifar10_test" --metrics "$out/$run/metrics.jsonl" \
    --checkpoint_dir "$out/$run/ckpt" --no-progress ${time_limit:+--time_limit "$time_limit"} $flags \
    >"$out/$run/result.json" 2>"$out/$run/train.log" || rc=$?
  log "$run: exit $rc, $(cat "$out/$run/result.json")"
  [ $rc = 0 ] || failed=1
done
if [ -n "$pack" ]; then
  tar -czf "$pack" -C "$(dirname "$out")" --exclude ckpt --exclude data "$(basename "$out")"
fi
exit $failed
