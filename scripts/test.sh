#!/usr/bin/env bash
# Runs every test: the C++ suite (GoogleTest through CTest) and the Python suite (pytest).
# Data-dependent tests read ../shared/data and skip with a message where it is absent.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" || exit 1
py=$(command -v "${PYTHON:-python3}")
jobs=$(nproc)

echo "== C++ tests"
(cd "$root/build" && ctest -j "$jobs" --output-on-failure --timeout 600)
cpp=$?
echo "== Python tests"
(cd "$root" && "$py" -m pytest -q tests/python)
python=$?
if [ $cpp -ne 0 ] || [ $python -ne 0 ]; then
  echo "FAILED: C++ exit $cpp, Python exit $python"
  exit 1
fi
echo "all tests passed"
