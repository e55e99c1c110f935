#!/usr/bin/env bash
# The README's second command: install what is missing, build, run every
# test (format check; unit, conformance and real-process tests, the
# invalid-manifest corpus; all of them again under ASan+UBSan; and a bounded
# fuzzing run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make test
