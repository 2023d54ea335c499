#!/usr/bin/env bash
# The Python reference 1.58.2 (openhands-sdk, -tools, -workspace,
# -agent-server), the release gohands is wire compatible with, in a venv of
# its own beside 20-reference.sh's 1.43.1 one (kept for the back-compat
# tests). 1.58.2 needs no FastAPI or litellm pin: its server runs on the
# FastAPI the resolver picks, and its litellm imports cleanly. Needs a
# Python >= 3.12 (pyenv's, or $GOHANDS_PYTHON) and PyPI.
#
# The venv is cached under $GOHANDS_CACHE/reference158/venv-<hash of the
# pins>; a finished venv is not redone. Tests find its python through
# internal/testenv.Reference158Python: $GOHANDS_REFERENCE158_PYTHON, else
# the path this script writes to $GOHANDS_CACHE/reference158/python.
#
#   21-reference158.sh           install (idempotent)
#   21-reference158.sh --print   print the venv's python, non-zero if absent
set -euo pipefail
pins=(
  openhands-sdk==1.58.2
  openhands-tools==1.58.2
  openhands-workspace==1.58.2
  openhands-agent-server==1.58.2
)
cache=${GOHANDS_CACHE:-$HOME/.cache/gohands}/reference158
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
venv=$cache/venv-$key

if [[ ${1:-} == --print ]]; then
  [[ -x $venv/bin/python && -f $venv/.complete ]] || exit 1
  echo "$venv/bin/python"; exit 0
fi

if [[ -x $venv/bin/python && -f $venv/.complete ]]; then
  echo "reference 1.58.2 venv ready: $venv"
  echo "$venv/bin/python" >"$cache/python"
  exit 0
fi

py=${GOHANDS_PYTHON:-}
if [[ -z $py ]]; then
  for c in /root/.pyenv/versions/3.1[3-9]*/bin/python3 /root/.pyenv/versions/3.12*/bin/python3 \
    "$(command -v python3.13 || true)" "$(command -v python3.12 || true)" "$(command -v python3 || true)"; do
    [[ -n $c && -x $c ]] || continue
    if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then py=$c; break; fi
  done
fi
if [[ -z $py ]] || ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
  echo "21-reference158.sh: the OpenHands reference needs Python >= 3.12 and none was found" >&2
  echo "  (looked in /root/.pyenv/versions/3.1[2-9]*, python3.13, python3.12, python3)." >&2
  echo "  Install one (pyenv install 3.13, or Debian 13's python3) or set GOHANDS_PYTHON." >&2
  exit 1
fi

echo "installing the reference 1.58.2 into $venv with $("$py" -V) ($py)"
mkdir -p "$cache"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import openhands.sdk, openhands.workspace, openhands.agent_server, openhands.tools.terminal, openhands.tools.ask_oracle'
touch "$venv/.complete"
echo "$venv/bin/python" >"$cache/python"
echo "reference 1.58.2 venv ready: $venv"
