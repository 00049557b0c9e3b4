# Sourced by the GPU scripts (gpu_check.sh, gpu_reproduce.sh, gpu_tta.sh). unpack_bundle PYTHON:
# where $bundle is a .tar.xz, unpacks it into a temporary folder ($unpacked, removed on exit) by
# tar, else by Python's tarfile (tar without xz), and points $bundle at the bundle's folder in
# it; a folder is left as it is. Fails when it cannot unpack.
unpacked=""
trap 'rm -rf "$unpacked"' EXIT
unpack_bundle() {
  [ -f "$bundle" ] || return 0
  unpacked=$(mktemp -d "${TMPDIR:-/tmp}/crossbow_bundle.XXXXXX")
  tar -xJf "$bundle" -C "$unpacked" 2>/dev/null ||
    "$1" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$bundle" "$unpacked" || return 1
  bundle=$(find "$unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)
}
# For the scripts that run a bundle or a build (gpu_check.sh, gpu_tta.sh). bundle_usage
# OPTIONS...: their usage line, with their other OPTIONS; exits 2. bundle_flags TAKE ARGS...:
# each FLAG VALUE of ARGS to `TAKE FLAG VALUE` (false for a flag it does not take), else to
# bundle_flag (the flags they share: --bundle, --build, --out, --pack), else usage.
# one_bundle_or_build: whether exactly one of a bundle and a build was given.
bundle_usage() {
  echo "usage: $0 (--bundle DIR|FILE.tar.xz | --build DIR) $*" >&2
  exit 2
}
bundle_flag() {
  case $1 in
    --bundle) bundle=$2 ;;
    --build) build=$(realpath -m "$2") ;;
    --out) out=$2 ;;
    --pack) pack=$(realpath -m "$2") ;;
    *) return 1 ;;
  esac
}
bundle_flags() {
  local take=$1
  shift
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    "$take" "$1" "$2" || bundle_flag "$1" "$2" || usage
    shift 2
  done
}
one_bundle_or_build() { [ -n "$bundle$build" ] && { [ -z "$bundle" ] || [ -z "$build" ]; }; }
