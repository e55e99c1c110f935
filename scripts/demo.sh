#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main
# example. Until the local engine lands, "run" means validate the examples
# and show the PyTorch job as upstream's defaulting completes it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make demo
