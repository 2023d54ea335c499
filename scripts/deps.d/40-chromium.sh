#!/usr/bin/env bash
# Chromium for the browser tool set (tools/browser): Debian's chromium
# package, driven headless over CDP. Idempotent: nothing to do when a
# chromium binary is on PATH.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "40-chromium.sh: chromium is missing and there is no apt-get to install it; install Chromium and put it on PATH" >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
echo "== apt-get install chromium"
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null || { echo "40-chromium.sh: chromium still not on PATH after apt-get install" >&2; exit 1; }
