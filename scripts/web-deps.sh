#!/usr/bin/env bash
# Installs the dashboard's libraries (web/package-lock.json) into
# web/node_modules, from the npm registry, when they are missing or the
# lock file changed since. The build embeds them into the binary; nothing
# is fetched at run time.
set -euo pipefail
cd "$(dirname "$0")/../web"
stamp=node_modules/.package-lock.json
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ]; then exit 0; fi
command -v npm >/dev/null || { echo "web-deps: npm is missing: run scripts/install-deps.sh" >&2; exit 1; }
echo "web-deps: installing the dashboard's libraries (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
