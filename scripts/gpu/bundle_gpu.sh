#!/usr/bin/env bash
# Packs the C++ side of scripts/gpu/gpu_check.sh, gpu_reproduce.sh and gpu_tta.sh for a GPU machine that
# has CUDA's libraries but none of our Debian packages: crossbow_bench, crossbow_cuda_tests,
# crossbow_train and crossbow_convert, libcrossbow.so and libcrossbow_data.so (without
# libcrossbow_codecs.so: OpenCV's imgcodecs would bring ~1 GB of libraries), every other shared
# library they need (by ldd) except glibc's and CUDA's, the learner specs of the check, the
# reproductions of --runs as `crossbow reproduce --export` writes them (runs/NAME/; he-resnet32
# compressed to 60 epochs is gpu_tta.sh's Crossbow run), the CIFAR-10
# JPEG archive of the data folder with a Pillow wheel for Python 3.12 to decode it there
# (data/), the launcher (scripts/gpu/bundle_run.sh as run) and a MANIFEST. Builds the programs
# first (CUDA on, Release; configures the build folder if it has no cache). Writes OUT/ and
# OUT.tar.xz, prints the size, and fails above 60 MiB (so that it fits where a remote runner
# copies at most 64 MiB).
#
#   scripts/gpu/bundle_gpu.sh [--build build] [--out build-gpu/bundle] [--runs "RECIPE:VARIANT:EPOCHS ..."]
#                         [--data-dir DIR]   (the data folder: crossbow.archives)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
out=$root/build-gpu/bundle
runs="he-resnet20:sma:164 he-resnet20:published:164 he-resnet32:sma:164 he-resnet32:published:164
he-resnet56:sma:164 he-resnet56:published:164 vgg16-cifar:sma:164 vgg16-cifar:published:164
he-resnet32:sma:60"
data=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --data-dir) data=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--out DIR] [--runs 'RECIPE:VARIANT:EPOCHS ...']" \
      "[--data-dir DIR]" >&2; exit 2 ;;
  esac
done
die() { echo "bundle_gpu: $*" >&2; exit 1; }

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCROSSBOW_CUDA=ON -DCROSSBOW_MPI=OFF \
    -DCROSSBOW_BUILD_PYTHON=OFF
fi
grep -q '^CROSSBOW_CUDA_ENABLED:INTERNAL=ON$' "$build/CMakeCache.txt" ||
  die "$build is configured without CUDA: reconfigure it with -DCROSSBOW_CUDA=ON, or --build DIR"
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$build/CMakeCache.txt" ||
  echo "bundle_gpu: warning: $build is not a Release build; its figures will be slow" >&2
programs=(crossbow_bench crossbow_cuda_tests crossbow_train crossbow_convert)
nice -n 10 cmake --build "$build" --target "${programs[@]}" -j"${JOBS:-2}"

rm -rf "$out" "$out.tar.xz"
mkdir -p "$out/bin" "$out/lib/compat" "$out/specs" "$out/runs" "$out/data"
for program in "${programs[@]}"; do cp "$build/$program" "$out/bin/"; done
cp -L "$build/libcrossbow.so" "$build/libcrossbow_data.so" "$out/lib/"
strip --strip-unneeded "$out"/bin/* "$out/lib/libcrossbow.so" "$out/lib/libcrossbow_data.so"
cp "$root/scripts/gpu/bundle_run.sh" "$out/run"

# name => path for every library the programs load, sorted into: glibc's (every machine has
# them), CUDA's (the GPU machine has them), the C++ runtime (lib/compat, used only where the
# machine's is older) and the rest (lib/).
needs_cuda=()
while read -r name path; do
  case $name in
    linux-vdso* | ld-linux* | libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | \
      libresolv.so* | libutil.so*) ;;
    libcuda.so* | libcudart* | libcublas* | libcudnn* | libnccl* | libnvrtc* | libnvJitLink* | \
      libcufft* | libcurand* | libcusparse* | libcusolver* | libnvToolsExt*)
      needs_cuda+=("$name")
      ;;
    libstdc++* | libgcc_s* | libgomp*) cp -L "$path" "$out/lib/compat/$name" ;;
    libcrossbow.so | libcrossbow_data.so) ;;
    *)
      [ "$path" != "not" ] || die "$name is not found here (ldd); install it first"
      cp -L "$path" "$out/lib/$name"
      ;;
  esac
done < <(ldd "$out"/bin/* "$build/libcrossbow.so" "$build/libcrossbow_data.so" |
  awk '$2 == "=>" {print $1, $3}' | sort -u)

PYTHONPATH=$root/python python3 -m crossbow spec --net resnet32 --num-classes 10 \
  --device cuda:0 --lr 0.05 --weight-decay 1e-4 --output "$out/specs/resnet32.json"
PYTHONPATH=$root/python python3 -m crossbow spec --net lenet --device cuda:0 --lr 0.01 \
  --output "$out/specs/lenet.json"

for run in $runs; do
  IFS=: read -r recipe variant epochs <<<"$run"
  [ -n "$epochs" ] || die "--runs: '$run' is not RECIPE:VARIANT:EPOCHS"
  PYTHONPATH=$root/python python3 -m crossbow reproduce "$recipe" --variant "$variant" \
    --epochs "$epochs" --devices cuda:0 --export "$out/runs/$recipe-$variant-${epochs}ep" \
    >/dev/null
done

# The CIFAR-10 JPEGs and Pillow (for Python 3.12, the GPU machine's) to decode them there;
# neither is fetched on the GPU machine, which reaches no network.
if jpegs=$(PYTHONPATH=$root/python python3 -m crossbow.archives ${data:+--data-dir "$data"} \
  cifar10-jpg.tar.gz); then
  cp "$jpegs" "$out/data/"
else
  echo "bundle_gpu: warning: the bundle cannot run scripts/gpu/gpu_reproduce.sh" >&2
fi
wheels=${CROSSBOW_CACHE:-$HOME/.cache/crossbow}/wheels
ls "$wheels"/pillow-*-cp312-*manylinux*x86_64*.whl >/dev/null 2>&1 ||
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$wheels" pillow >&2 ||
  echo "bundle_gpu: warning: no Pillow wheel (pip download failed): the GPU machine's" \
    "Pillow must decode the JPEGs" >&2
cp "$(ls "$wheels"/pillow-*-cp312-*manylinux*x86_64*.whl 2>/dev/null | tail -1)" "$out/data/" \
  2>/dev/null || true

gpu_code() {  # what GPU code a library carries, for the MANIFEST
  local size flags
  size=$(readelf -SW "$1" | awk '{for (i = 1; i < NF; i++) if ($i == ".nv_fatbin") print $(i + 4)}')
  flags=$(grep -ho -- '--generate-code=[^ ]*' "$build/CMakeFiles/crossbow.dir/flags.make" |
    sort -u | tr '\n' ' ' || true)
  echo "${size:+$((16#$size)) bytes of fatbin, }nvcc ${flags:-(no CUDA sources)}"
}

{
  modified=$(git -C "$root" diff --quiet HEAD || echo " (modified)")
  echo "commit $(git -C "$root" rev-parse HEAD)$modified"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "GPU code: $(gpu_code "$out/lib/libcrossbow.so")"
  echo "needs from the GPU machine: ${needs_cuda[*]:-nothing} (and the CUDA driver)"
  (cd "$out" && find . -type f ! -name MANIFEST | sort | xargs ls -l | awk '{print $5, $9}')
} >"$out/MANIFEST"

tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T0 -9 >"$out.tar.xz"
bytes=$(stat -c %s "$out.tar.xz")
echo "bundle: $out.tar.xz, $((bytes / 1024 / 1024)) MiB ($bytes bytes;" \
  "$(du -sh "$out" | cut -f1) unpacked)"
[ "$bytes" -le $((60 * 1024 * 1024)) ] || die "the bundle is over 60 MiB"
