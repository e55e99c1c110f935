#!/usr/bin/env bash
# Lists the tests the last ctest run in BUILD_DIR skipped, each with its
# reason (GTEST_SKIP's message), so that a green run says what it did not
# check: upstream's conformance files absent, not root, ...
set -euo pipefail
log="${1:?usage: skipped.sh BUILD_DIR}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skipped.sh: no $log" >&2; exit 1; }
skipped=$(awk '
  /^\[ RUN      \] / { test = $4 }
  /: Skipped$/ { getline reason; print "  " test ": " reason }
' "$log" | sort -u)
if [ -z "$skipped" ]; then
  echo "skipped: none"
else
  n=$(wc -l <<<"$skipped")
  echo "skipped: $n test$([ "$n" -eq 1 ] || echo s)"
  echo "$skipped"
fi
