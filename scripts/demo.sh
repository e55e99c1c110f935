#!/usr/bin/env bash
# The README's first command: install what is missing, build, and train the
# main example: a PyTorchJob (Master + 2 Workers, DDP over gloo) on
# scikit-learn's digits, run by `trainyard run` as three real processes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make demo
