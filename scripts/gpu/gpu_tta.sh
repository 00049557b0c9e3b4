#!/usr/bin/env bash
# Time to accuracy, ResNet-32 on CIFAR-10 on one GPU: Crossbow against PyTorch at its best, each
# side's test accuracy against training time (the paper's headline plot), in one prepared run:
#   1. the CIFAR-10 JPEGs decoded once into the same raw records for both sides
#      (scripts/datagen/cifar_records.sh: LMDBs for crossbow_train, the binary files for PyTorch);
#   2. Crossbow: the He recipe's SMA version (`crossbow reproduce he-resnet32 --variant sma`)
#      compressed to --epochs, with crossbow_train at each of --batches per learner (lr
#      0.1 x sqrt(batch / 128), auto-tuned learners unless --flags says otherwise), each for at
#      most --time-limit seconds of training; its metrics in OUT/runs/crossbow_bB/;
#   3. PyTorch (scripts/gpu/gpu_tta_torch.py, --torch-python), each of --torch-recipes: goyal, linear
#      scaling and warm-up at --torch-batch in --torch-mode (by default the fastest fp32 point
#      of the gpu_check.json given as --check), and he, He's recipe at batch 128 in the same
#      mode, both over --epochs with the drops at the same fractions and the same --time-limit;
#      OUT/runs/pytorch_RECIPE_bB_MODE.jsonl;
#   4. the report (scripts/gpu/gpu_tta_report.py): time to 90% and 91%, accuracy at --budgets, the ratio,
#      OUT/tta.{json,md,png}, with the GPU (OUT/gpu.csv) and the versions.
# The programs come from --bundle (scripts/gpu/bundle_gpu.sh; its runs/he-resnet32-sma-Eep export)
# or a --build folder (the run exported here with the crossbow module). --precision bf16 runs
# both sides in bf16 (Crossbow's --precision, PyTorch's autocast). OUT is --out (else ./tta);
# --pack FILE.tar.gz packs it (not the data) for a machine that hands back few files. Where $OUT
# is set (a runner's folder of files to hand back), OUT is a folder beside it and the pack $OUT/tta.tar.gz
# unless --out and --pack say otherwise.
# --jpegs: the CIFAR-10 JPEGs (default: the bundle's, or cifar10-jpg.tar.gz in the data folder,
# $CROSSBOW_DATA: crossbow.archives). A run already in OUT/runs is kept, so that runs split over
# two calls (--batches '' or --torch-recipes '' leave a side out) report together; the report
# alone is `python3 scripts/gpu/gpu_tta_report.py OUT`.
#
#   scripts/gpu/gpu_tta.sh --bundle build-gpu/bundle.tar.xz --check gpu_check.json --out /tmp/tta \
#     --pack "$OUT/tta.tar.gz"
#
# Exit: as scripts/gpu/gpu_tta_report.py (0 target met, 4 a side unmeasured, 6 target not met); 1 a run
# failed; 2 usage, or the bundle or build lacks what a step needs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bundle_unpack.sh
. "$root/scripts/gpu/bundle_unpack.sh"
bundle="" build="" jpegs="" out=$PWD/tta pack="" check="" flags="" torch_flags=""
if [ -n "${OUT:-}" ]; then out=${TMPDIR:-/tmp}/tta pack=$OUT/tta.tar.gz; fi
epochs=60 time_limit=240 batches="32 16" torch_batch="" torch_mode="" precision=fp32
device=cuda:0 budgets="60 120 240" python=${PYTHON:-python3} torch_python="" recipes="goyal he"
usage() {
  bundle_usage "[--jpegs ARCHIVE|FOLDER]" \
    "[--epochs $epochs] [--time-limit $time_limit] [--batches '$batches'] [--flags FLAGS]" \
    "[--check gpu_check.json | --torch-batch B --torch-mode M] [--torch-flags FLAGS]" \
    "[--torch-recipes '$recipes'] [--torch-python PYTHON] [--precision fp32|bf16]" \
    "[--device $device]" \
    "[--budgets '$budgets'] [--out DIR] [--pack FILE.tar.gz]"
}
flag() {
  case $1 in
    --jpegs) jpegs=$(realpath -m "$2") ;;
    --epochs) epochs=$2 ;;
    --time-limit) time_limit=$2 ;;
    --batches) batches=$2 ;;
    --flags) flags=$2 ;;
    --check) check=$(realpath -m "$2") ;;
    --torch-batch) torch_batch=$2 ;;
    --torch-mode) torch_mode=$2 ;;
    --torch-flags) torch_flags=$2 ;;
    --torch-python) torch_python=$2 ;;
    --torch-recipes) recipes=$2 ;;
    --precision) precision=$2 ;;
    --device) device=$2 ;;
    --budgets) budgets=$2 ;;
    *) return 1 ;;
  esac
}
bundle_flags flag "$@"
one_bundle_or_build || usage
torch_python=${torch_python:-$python}
log() { echo "gpu_tta [$SECONDS s]: $*" >&2; }
die() { log "$*"; exit 2; }
mkdir -p "$out/runs" "$out/logs"
out=$(cd "$out" && pwd)
rm -f "$out"/tta.*

# The programs and the Crossbow run (spec and options).
run_name=he-resnet32-sma-${epochs}ep
if [ -n "$bundle" ]; then
  unpack_bundle "$python" || die "cannot unpack $bundle"
  "$bundle/run" --check >"$out/logs/libraries.log" 2>&1 ||
    die "the bundle's programs do not find their libraries: $(cat "$out/logs/libraries.log")"
  exported=$bundle/runs/$run_name
  [ -f "$exported/spec.json" ] || die "the bundle has no run $run_name (bundle it with" \
    "scripts/gpu/bundle_gpu.sh --runs '... he-resnet32:sma:$epochs')"
  train=("$bundle/run" crossbow_train)
  convert=("$bundle/run" crossbow_convert)
  jpegs=${jpegs:-$bundle/data/cifar10-jpg.tar.gz}
  cp "$bundle/MANIFEST" "$out/bundle_manifest.txt" 2>/dev/null || true
else
  for f in crossbow_train crossbow_convert; do
    [ -x "$build/$f" ] || die "$build has no $f"
  done
  exported=$out/logs/$run_name
  PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} "$python" -m crossbow reproduce he-resnet32 \
    --variant sma --epochs "$epochs" --devices "$device" --export "$exported" \
    >"$out/logs/export.log" || die "cannot export $run_name: $(tail -3 "$out/logs/export.log")"
  train=("$build/crossbow_train")
  convert=("$build/crossbow_convert")
  [ -n "$jpegs" ] || jpegs=$(PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} "$python" -m \
    crossbow.archives cifar10-jpg.tar.gz) || die "no CIFAR-10 JPEGs: give --jpegs"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.csv" \
  2>/dev/null || echo "no GPU (nvidia-smi finds none)" >"$out/gpu.csv"

# PyTorch's best fp32 point of a GPU check, unless given.
if [ -z "$torch_batch$torch_mode" ] && [ -n "$check" ]; then
  read -r torch_batch torch_mode < <("$python" - "$check" <<'PY'
import json, sys
points = [r for r in json.load(open(sys.argv[1]))["torch"]
          if r.get("images_per_s") and r.get("precision", "fp32") == "fp32"]
best = max(points, key=lambda r: r["images_per_s"])
print(best["batch_size"], best.get("mode", "eager"))
PY
  ) || die "no PyTorch fp32 point in $check"
fi
if [ -n "$recipes" ]; then
  [ -n "$torch_batch" ] && [ -n "$torch_mode" ] ||
    die "say --check FILE or --torch-batch and --torch-mode"
  log "PyTorch's best: batch $torch_batch, mode $torch_mode"
fi

# 1. The data.
data=$out/data
PYTHON=$python "$root/scripts/datagen/cifar_records.sh" --jpegs "$jpegs" --out "$data" \
  ${bundle:+--wheels "$bundle/data"} -- "${convert[@]}" || die "cannot make the CIFAR-10 records"

# 2. Crossbow, at each batch per learner.
failed=0
for b in $batches; do
  run=$out/runs/crossbow_b$b
  rm -rf "$run"
  mkdir -p "$run"
  lr=$("$python" -c "import math, sys; print(round(0.1 * math.sqrt(int(sys.argv[1]) / 128), 4))" \
    "$b")
  printf '{"side": "crossbow", "recipe": "%s", "batch_size": %s, "lr": %s, "precision": "%s",
 "epochs": %s, "time_limit": %s, "flags": "%s"}\n' "$run_name" "$b" "$lr" "$precision" \
    "$epochs" "$time_limit" "$flags" >"$run/settings.json"
  log "crossbow, batch $b per learner"
  rc=0
  # shellcheck disable=SC2086 # --flags is a word list
  "${train[@]}" --spec "$exported/spec.json" --options "$exported/options.json" \
    --train_db "$data/cifar10_train" --test_db "$data/cifar10_test" --metrics "$run/metrics.jsonl" \
    --checkpoint_dir "$run/ckpt" --checkpoint_every_epochs 0 --no-resume --no-progress \
    --batch_size "$b" --lr "$lr" --precision "$precision" --time_limit "$time_limit" $flags \
    >"$run/result.json" 2>"$run/train.log" || rc=$?
  rm -rf "$run/ckpt"
  log "crossbow, batch $b: exit $rc, $(cat "$run/result.json")"
  [ $rc = 0 ] || failed=1
done

# 3. PyTorch: Goyal at its best point, He at batch 128.
for recipe in $recipes; do
  b=$torch_batch
  [ "$recipe" != he ] || b=128
  name=pytorch_${recipe}_b${b}_$torch_mode
  log "$name"
  rc=0
  # shellcheck disable=SC2086 # --torch-flags is a word list
  "$torch_python" "$root/scripts/gpu/gpu_tta_torch.py" --train "$data/train.bin" --test "$data/test.bin" \
    --recipe "$recipe" --batch "$b" --mode "$torch_mode" --precision "$precision" \
    --epochs "$epochs" --time-limit "$time_limit" --device "$device" \
    --output "$out/runs/$name.jsonl" $torch_flags \
    2>"$out/logs/$name.log" || rc=$?
  log "$name: exit $rc"
  [ $rc = 0 ] || failed=1
done

# 4. The report.
rc=0
# shellcheck disable=SC2086 # the budgets are a word list
"$python" "$root/scripts/gpu/gpu_tta_report.py" "$out" --budgets $budgets || rc=$?
if [ -n "$pack" ]; then
  tar -czf "$pack" -C "$(dirname "$out")" --exclude data "$(basename "$out")" ||
    log "cannot pack $out into $pack"
fi
[ $failed = 0 ] || exit 1
exit $rc
