#!/usr/bin/env bash
# The GPU check, in one run of under 8 minutes on a machine with an NVIDIA GPU:
#   1. the GPU (nvidia-smi);
#   2. operator parity: every operator on CUDA against its CPU kernel, forward and backward, on
#      random inputs, TF32 off (crossbow_cuda_tests --gtest_filter=PARITY_FILTER);
#   3. the other GPU tests (the rest of crossbow_cuda_tests), each in a process of its own, so
#      that a crash costs one test and hides none of the others;
#   4. PyTorch's ResNet-32 training images/s at batch 16, 32, 64 and 512 (bench_torch_gpu.py), in
#      each of --torch-modes (eager, and graph: the whole step as one CUDA graph; compile and
#      channels_last on request), the targets against the best;
#   5. Crossbow's ResNet-32 training images/s at batch 16, 32 and 64 with 1, 2, 4 and 8 learners
#      and with --learners auto, on cuda:0 (crossbow_bench);
#   6. the same with --half-learners (1 8) in each of --precisions (bf16 fp16), and PyTorch
#      under autocast in each, one round at each of --batches (columns 1_bf16, 8_bf16, PyTorch
#      bf16, ...), last, so that a spent budget skips them first;
# each throughput point, on both sides, in --rounds rounds (3; round after round over all the
# points, so that a spent budget costs every point a round, not some points all of theirs),
# reported as the median of its rounds. A parity step in which no case ran fails the check.
# then a short table, last, and every result in OUT/gpu_check.json (OUT: --out, else
# ./gpu_check_results); --pack FILE also packs the whole of OUT (logs, each point's JSON) into
# FILE.tar.gz, for a machine that hands back a few files only. Where $OUT is set (the device
# tool's folder of files to hand back), OUT is a folder beside it and the pack is
# $OUT/gpu_check.tar.gz unless --out and --pack say otherwise: everything measured comes back.
# Every step has a timeout, and the steps share a budget (--budget).
#
#   scripts/gpu/gpu_check.sh --bundle build-gpu/bundle.tar.xz   (made by scripts/gpu/bundle_gpu.sh)
#   scripts/gpu/gpu_check.sh --build build                      (a CUDA build on this machine)
#
# Exit: 0 passed; 1 parity or another GPU test failed; 2 usage error, or the bundle or build is
# incomplete or its programs do not load; 3 no GPU here (after checking the bundle or build);
# 4 the tests passed but a benchmark failed or did not complete (a PyTorch step, fp32 or half,
# each checked on its own) or a target is unmeasured; 5 the report itself failed; 6 everything
# measured and a target not met.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bundle_unpack.sh
. "$root/scripts/gpu/bundle_unpack.sh"
start=$SECONDS
bundle="" build="" out=$PWD/gpu_check_results pack=""
if [ -n "${OUT:-}" ]; then out=${TMPDIR:-/tmp}/gpu_check pack=$OUT/gpu_check.tar.gz; fi
seconds=3 budget=450 rounds=3 python=${PYTHON:-python3}
batches="16 32 64" learners="1 2 4 8 auto" torch_batches="16 32 64 512" precisions="bf16 fp16"
half_learners="1 8" torch_modes="eager graph"
parity_filter='*Parity*'
usage() {
  bundle_usage "[--out DIR] [--seconds $seconds]" \
    "[--budget $budget] [--rounds $rounds] [--batches '$batches'] [--learners '$learners']" \
    "[--torch-batches '$torch_batches'] [--torch-modes '$torch_modes']" \
    "[--precisions '$precisions']" \
    "[--half-learners '$half_learners'] [--parity-filter '$parity_filter'] [--python python3]" \
    "[--pack FILE.tar.gz]"
}
flag() {
  case $1 in
    --seconds) seconds=$2 ;;
    --budget) budget=$2 ;;
    --rounds) rounds=$2 ;;
    --batches) batches=$2 ;;
    --learners) learners=$2 ;;
    --torch-batches) torch_batches=$2 ;;
    --torch-modes) torch_modes=$2 ;;
    --precisions) precisions=$2 ;;
    --half-learners) half_learners=$2 ;;
    --parity-filter) parity_filter=$2 ;;
    --python) python=$2 ;;
    *) return 1 ;;
  esac
}
bundle_flags flag "$@"
one_bundle_or_build || usage
mkdir -p "$out/logs" "$out/bench"
out=$(cd "$out" && pwd)
(cd "$out" && rm -rf steps.jsonl bench/*.json gpu_check.json parity.json gpu_tests torch.json \
  torch_half.json)
log() { echo "gpu_check [$((SECONDS - start)) s]: $*" >&2; }
record() {  # STEP STATUS [RC SECONDS]: one line of OUT/steps.jsonl
  printf '{"step": "%s", "status": "%s", "rc": %s, "seconds": %s}\n' "$1" "$2" "${3:-null}" \
    "${4:-0}" >>"$out/steps.jsonl"
}
report() {  # the table and OUT/gpu_check.json (and OUT packed, with --pack); exits with the code
  local rc=0
  "$python" "$root/scripts/gpu/gpu_check_report.py" "$out" || rc=$?
  if [ -n "$pack" ]; then
    tar -czf "$pack" -C "$(dirname "$out")" "$(basename "$out")" || log "cannot pack $out into $pack"
  fi
  exit $rc
}

# STEP CAP STDOUT COMMAND...: runs COMMAND with standard output to STDOUT and errors to
# OUT/logs/STEP.log, for at most CAP seconds or what the budget has left, and records it.
run_step() {
  local step=$1 cap=$2 stdout=$3
  shift 3
  local left=$((budget - (SECONDS - start)))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -lt 5 ]; then
    log "$step: skipped, the budget of $budget s is spent"
    record "$step" skipped
    return 0
  fi
  log "$step (at most $limit s)"
  local t0=$SECONDS rc=0 status=ok
  timeout --kill-after=5 "$limit" "$@" >"$stdout" 2>"$out/logs/$step.log" || rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    status=timeout
  elif [ $rc != 0 ]; then
    status=failed
  fi
  record "$step" $status $rc $((SECONDS - t0))
  [ $status = ok ] || log "$step: $status (exit $rc); see $out/logs/$step.log"
}

# The programs: from a bundle (a folder, or its .tar.xz unpacked to a temporary folder) or a
# build folder; the learner spec from the bundle, or made here.
incomplete() {
  log "incomplete: $*"
  echo "$*" >"$out/logs/programs.log"
  record programs incomplete
  report
}
if [ -n "$bundle" ]; then
  unpack_bundle "$python" || incomplete "cannot unpack $bundle"
  for f in run bin/crossbow_bench bin/crossbow_cuda_tests lib/libcrossbow.so specs/resnet32.json; do
    [ -e "$bundle/$f" ] ||
      incomplete "the bundle $bundle has no $f (make it with scripts/gpu/bundle_gpu.sh)"
  done
  "$bundle/run" --check >"$out/logs/libraries.log" 2>&1 ||
    incomplete "libraries missing: $(cat "$out/logs/libraries.log")"
  bench=("$bundle/run" crossbow_bench)
  tests=("$bundle/run" crossbow_cuda_tests)
  spec=$bundle/specs/resnet32.json
  cp "$bundle/MANIFEST" "$out/bundle_manifest.txt" 2>/dev/null || true
else
  build=$(cd "$build" && pwd)
  for f in crossbow_bench crossbow_cuda_tests; do
    [ -x "$build/$f" ] ||
      incomplete "$build has no $f (configure with -DCROSSBOW_CUDA=ON, build $f)"
  done
  bench=("$build/crossbow_bench")
  tests=("$build/crossbow_cuda_tests")
  spec=$out/resnet32.json
  PYTHONPATH=$root/python "$python" -m crossbow spec --net resnet32 --device cuda:0 --lr 0.05 \
    --output "$spec" || incomplete "cannot write the ResNet-32 spec (crossbow spec)"
fi
"${tests[@]}" --gtest_list_tests >"$out/logs/test_list.txt" 2>&1 ||
  incomplete "crossbow_cuda_tests does not start: $(tail -3 "$out/logs/test_list.txt")"
record programs ok

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >"$out/logs/nvidia_smi.txt" 2>&1 ||
  ! grep -q '^GPU ' "$out/logs/nvidia_smi.txt"; then
  log "no GPU present (nvidia-smi finds none): the programs are complete and start, nothing was" \
    "measured"
  record gpu absent
  report
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader \
  >"$out/gpu.csv" 2>>"$out/logs/nvidia_smi.txt" ||
  head -1 "$out/logs/nvidia_smi.txt" >"$out/gpu.csv"
record gpu ok

run_step parity 180 "$out/logs/parity.out" env NVIDIA_TF32_OVERRIDE=0 "${tests[@]}" \
  --gtest_filter="$parity_filter" --gtest_output="json:$out/parity.json"
# One process per test (the first GPU run's segmentation fault in the second test hid all the
# others): steps gpu_test_NAME, GoogleTest's JSON in OUT/gpu_tests/NAME.json ('/' as '_').
mkdir -p "$out/gpu_tests"
"${tests[@]}" --gtest_list_tests --gtest_filter="-$parity_filter" 2>/dev/null |
  awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}' >"$out/logs/gpu_tests.list" || true
while read -r test; do
  name=${test//\//_}
  run_step "gpu_test_$name" 60 "$out/logs/gpu_test_$name.out" env NVIDIA_TF32_OVERRIDE=0 \
    "${tests[@]}" --gtest_filter="$test" --gtest_output="json:$out/gpu_tests/$name.json" </dev/null
done <"$out/logs/gpu_tests.list"
bench_point() {  # STEP CAP FLAGS...: one crossbow_bench point on cuda:0, into OUT/bench/
  local step=$1 cap=$2
  shift 2
  run_step "$step" "$cap" "$out/bench/${step#bench_}.json" "${bench[@]}" --spec "$spec" \
    --devices cuda:0 --seconds "$seconds" --warmup_iterations 5 "$@"
}
torch_points() {  # STEP CAP FILE FLAGS...: bench_torch_gpu.py, its results into OUT/FILE
  local step=$1 cap=$2 file=$3
  shift 3
  run_step "$step" "$cap" "$out/logs/$step.out" "$python" "$root/scripts/gpu/bench_torch_gpu.py" \
    --seconds "$seconds" --output "$out/$file" "$@"
}
# shellcheck disable=SC2086 # the batch and precision lists are word lists
torch_points torch 200 torch.json --batches $torch_batches --modes $torch_modes \
  --rounds "$rounds"
for r in $(seq 1 "$rounds"); do
  for b in $batches; do
    for k in $learners; do
      cap=60
      [ "$k" != auto ] || cap=120
      bench_point "bench_b${b}_l${k}_r$r" $cap --batch_size "$b" --learners "$k" \
        --autotune_window 30 --max_learners 16
    done
  done
done
for p in $precisions; do
  for k in $half_learners; do
    for b in $batches; do
      bench_point "bench_b${b}_l${k}_$p" 60 --batch_size "$b" --learners "$k" --precision "$p"
    done
  done
done
# shellcheck disable=SC2086
[ -z "$precisions" ] ||
  torch_points torch_half 120 torch_half.json --batches $batches --rounds 1 --precisions $precisions
report
