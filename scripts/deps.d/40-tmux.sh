#!/usr/bin/env bash
# tmux for the interactive mode's end-to-end test (cmd/gohands
# TestTUIInTmux), which drives gohands in a tmux session of fixed size.
# Idempotent: nothing to do when tmux is on PATH.
set -euo pipefail
if command -v tmux >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "40-tmux.sh: tmux is missing and there is no apt-get to install it; install tmux and put it on PATH" >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
echo "== apt-get install tmux"
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends tmux >/dev/null
command -v tmux >/dev/null || { echo "40-tmux.sh: tmux still not on PATH after apt-get install" >&2; exit 1; }
