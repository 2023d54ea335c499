#!/usr/bin/env bash
# ACP peers for the agent/acp and cmd/gohands tests: Zed's Claude Agent ACP
# adapter (bundling the Claude Code CLI; its model is pointed at llmtest) and
# the official TypeScript ACP SDK, pinned by
# agent/acp/testdata/npm/package-lock.json. npm ci only when they are missing
# or the lock file changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=agent/acp/testdata/npm
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
