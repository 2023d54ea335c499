#!/usr/bin/env bash
# Installs the programs the tests use that a fresh machine lacks.
# Idempotent: does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v bash >/dev/null || need_apt+=(bash)
if ((${#need_apt[@]})); then
  echo "== apt-get install ${need_apt[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
