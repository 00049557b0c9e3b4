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
