#!/usr/bin/env bash
# The npm packages tests run, each directory pinned by its
# package-lock.json; npm ci in a directory only when its packages are
# missing or its lock file changed since the last install.
#   mcp/testdata/npm              MCP servers the mcp package tests run against
#   agent/acp/testdata/npm        ACP peers for agent/acp and cmd/gohands: Zed's
#                                 Claude Agent ACP adapter (bundling the Claude
#                                 Code CLI, its model pointed at llmtest) and the
#                                 official TypeScript ACP SDK
#   llm/openai/testdata/prism     Stoplight Prism, the validating mock server
#                                 llm/openai's conformance test runs on OpenAI's
#                                 OpenAPI document
#   tools/browser/testdata/rrweb  rrweb, the session recorder the browser's
#                                 recording tests inject into Chromium
set -euo pipefail
cd "$(dirname "$0")/../.."
dirs=(mcp/testdata/npm agent/acp/testdata/npm llm/openai/testdata/prism tools/browser/testdata/rrweb)
for dir in "${dirs[@]}"; do
  if [[ -f $dir/node_modules/.package-lock.json && ! $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
    continue
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
done
