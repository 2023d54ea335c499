#!/usr/bin/env bash
# rrweb, the session recorder tools/browser's recording tests inject into
# Chromium, pinned by
# tools/browser/testdata/rrweb/package-lock.json. npm ci only when it is
# missing or the lock file changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=tools/browser/testdata/rrweb
if [[ -f $dir/node_modules/.package-lock.json && ! $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "== apt-get install nodejs npm"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
echo "== npm ci in $dir"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
