#!/usr/bin/env bash
# The README's second command: install what is missing, build, run every
# test (format check; every test: unit, conformance and real-process tests,
# the invalid-manifest corpus, under ASan+UBSan, then what was skipped; the
# optimized build with the concurrent tests under ThreadSanitizer; and a
# bounded fuzzing run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Every dependency is installed now: a test that finds one missing fails
# instead of skipping (common/tests/needs.h).
export TRAINYARD_REQUIRE_DEPS=1
make test
