#!/usr/bin/env bash
# CIFAR-10's JPEGs (a cifar10-jpg.tar.gz archive, or a folder with train/ and test/, one
# sub-folder per class) decoded once by Pillow into CIFAR-10's binary format
# (scripts/datagen/cifar_binary.py: DATA/train.bin, DATA/test.bin, which scripts/gpu/gpu_tta_torch.py reads) and
# converted by `crossbow_convert cifar10` into raw LMDBs (DATA/cifar10_train, DATA/cifar10_test:
# the records `crossbow reproduce` trains on elsewhere), so that both sides of a comparison read
# the same pixels. DATA/train.records holds the count. Done once per DATA: a folder that has
# them is left alone. Where Python has no Pillow, the wheel in --wheels is unpacked for it.
#
#   scripts/datagen/cifar_records.sh --jpegs bundle/data/cifar10-jpg.tar.gz --out DATA \
#     [--wheels bundle/data] -- bundle/run crossbow_convert
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
jpegs="" data="" wheels="" python=${PYTHON:-python3}
usage() {
  echo "usage: $0 --jpegs ARCHIVE.tar.gz|FOLDER --out DATA [--wheels DIR] -- CONVERT..." >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
  esac
  [ $# -ge 2 ] || usage
  case $1 in
    --jpegs) jpegs=$2 ;;
    --out) data=$2 ;;
    --wheels) wheels=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[ -n "$jpegs" ] && [ -n "$data" ] && [ $# -gt 0 ] || usage
die() { echo "cifar_records: $*" >&2; exit 2; }
if [ -f "$data/cifar10_test/data.mdb" ] && [ -f "$data/test.bin" ]; then exit 0; fi
rm -rf "$data"
mkdir -p "$data"
if [ -d "$jpegs" ]; then
  folder=$jpegs
elif [ -f "$jpegs" ]; then
  tar -xzf "$jpegs" -C "$data"
  folder=$data/cifar10-jpg
else
  die "no JPEGs at $jpegs"
fi
[ -d "$folder/train" ] && [ -d "$folder/test" ] || die "$folder has no train/ and test/ folders"
if ! "$python" -c 'import PIL' 2>/dev/null; then
  wheel=$(ls "${wheels:-/nonexistent}"/pillow-*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || die "$python has no Pillow and no wheel of it is at hand (--wheels)"
  "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$wheel" "$data/pillow"
  export PYTHONPATH=$data/pillow${PYTHONPATH:+:$PYTHONPATH}
fi
for split in train test; do
  "$python" "$root/scripts/datagen/cifar_binary.py" "$folder/$split" "$data/$split.bin" >&2
  echo $(($(stat -c %s "$data/$split.bin") / 3073)) >"$data/$split.records"
  "$@" cifar10 "$data/cifar10_$split.partial" "$data/$split.bin" >&2
  mv "$data/cifar10_$split.partial" "$data/cifar10_$split"
done
rm -rf "$data/cifar10-jpg" "$data/pillow"
