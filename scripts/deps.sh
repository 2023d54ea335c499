#!/usr/bin/env bash
# Installs the programs the tests use that a fresh machine lacks.
# Idempotent: does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v bash >/dev/null || need_apt+=(bash)
command -v python3 >/dev/null || need_apt+=(python3)
command -v stty >/dev/null || need_apt+=(coreutils)
if ((${#need_apt[@]})); then
  echo "== apt-get install ${need_apt[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Each feature's own prerequisites (a Python venv, Chromium, a Docker engine,
# PostgreSQL...) live in scripts/deps.d/*.sh, one file per feature, each
# idempotent and cached by its inputs. They run in name order.
for f in scripts/deps.d/*.sh; do
  [[ -e $f ]] || continue
  echo "== $f"
  bash "$f"
done
