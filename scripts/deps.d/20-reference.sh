#!/usr/bin/env bash
# The Python reference (openhands-sdk, -tools, -workspace, -agent-server) and
# schemathesis, in one venv: the server tests drive gohands with the
# reference's own client, run the reference's server beside it, and fuzz the
# served OpenAPI document. Needs a Python >= 3.12 (pyenv's, or
# $GOHANDS_PYTHON) and PyPI.
#
# The venv is cached under $GOHANDS_CACHE/reference/<hash of the pins>; a
# finished venv is not redone. Tests find its python through
# internal/testenv.ReferencePython: $GOHANDS_REFERENCE_PYTHON, else the
# path this script writes to $GOHANDS_CACHE/reference/python.
#
#   20-reference.sh           install (idempotent)
#   20-reference.sh --print   print the venv's python, non-zero if absent
set -euo pipefail
pins=(
  openhands-sdk==1.43.1
  openhands-tools==1.43.1
  openhands-workspace==1.43.1
  openhands-agent-server==1.43.1
  fastapi==0.121.0
  # the newest litellm the resolver picks imports mcp.types names the mcp
  # that fastmcp allows lacks, and every async completion fails; 1.93.0 is
  # the oldest openhands-sdk 1.43.1 accepts and works
  litellm==1.93.0
  schemathesis==4.32.5
)
cache=${GOHANDS_CACHE:-$HOME/.cache/gohands}/reference
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
venv=$cache/venv-$key

if [[ ${1:-} == --print ]]; then
  [[ -x $venv/bin/python && -f $venv/.complete ]] || exit 1
  echo "$venv/bin/python"; exit 0
fi

if [[ -x $venv/bin/python && -f $venv/.complete ]]; then
  echo "reference venv ready: $venv"
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
  echo "20-reference.sh: the OpenHands reference needs Python >= 3.12 and none was found" >&2
  echo "  (looked in /root/.pyenv/versions/3.1[2-9]*, python3.13, python3.12, python3)." >&2
  echo "  Install one (pyenv install 3.13, or Debian 13's python3) or set GOHANDS_PYTHON." >&2
  exit 1
fi

echo "installing the reference into $venv with $("$py" -V) ($py)"
mkdir -p "$cache"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import openhands.sdk, openhands.workspace, openhands.agent_server, openhands.tools.terminal, schemathesis'
touch "$venv/.complete"
echo "$venv/bin/python" >"$cache/python"
echo "reference venv ready: $venv"
