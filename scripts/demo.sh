#!/usr/bin/env bash
# The main job: set up, convert the bundled CIFAR-10 sample and train a ResNet with SMA and
# auto-tuned learners for a few minutes, printing accuracy, images/s and the learners chosen.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
exec "$(command -v "${PYTHON:-python3}")" "$root/scripts/demo/demo_cifar.py" "$@"
