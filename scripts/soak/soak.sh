#!/usr/bin/env bash
# Soak and fault cases on this machine (about 15 minutes on two cores), one PASS/FAIL line each:
# scripts/soak/soak.py says what they are. Not part of the tests: run it alone, nothing else busy.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$root/scripts/setup.sh"
exec "$(command -v "${PYTHON:-python3}")" "$root/scripts/soak/soak.py" "$@"
