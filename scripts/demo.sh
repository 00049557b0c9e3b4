#!/usr/bin/env bash
# The main job: set up, then train LeNet on the bundled MNIST sample with one learner and
# report test accuracy and images/s.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
exec "$(command -v "${PYTHON:-python3}")" "$root/scripts/demo_mnist.py" --data "$root/data/samples/mnist" "$@"
