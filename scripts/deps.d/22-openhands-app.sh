#!/usr/bin/env bash
# The OpenHands app server (PyPI openhands-ai 1.11.0), for tests/pyclient's
# TestOpenHandsApp: the app runs its conversations in "process" sandboxes
# that start `gohands serve` instead of its Python agent server. Needs a
# Python >= 3.12 and PyPI; the venv (~640 packages, ~4 min) is cached under
# $GOHANDS_CACHE/openhands-app/venv-<hash of the pin>, and a finished venv
# is not redone. Tests find its python through internal/testenv.OpenHandsAppPython.
#
# The app, when it finds /.dockerenv, reaches a sandbox on localhost as
# host.docker.internal. On a machine that is itself a container without that
# name (this one), the script maps it to 127.0.0.1 in /etc/hosts, so the
# app's calls stay on loopback.
#
#   22-openhands-app.sh           install (idempotent)
#   22-openhands-app.sh --print   print the venv's python, non-zero if absent
set -euo pipefail
pins=(openhands-ai==1.11.0)
cache=${GOHANDS_CACHE:-$HOME/.cache/gohands}/openhands-app
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
venv=$cache/venv-$key

if [[ ${1:-} == --print ]]; then
  [[ -x $venv/bin/python && -f $venv/.complete ]] || exit 1
  echo "$venv/bin/python"; exit 0
fi

if [[ -e /.dockerenv ]] && ! getent hosts host.docker.internal >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  echo "mapping host.docker.internal to 127.0.0.1 in /etc/hosts (the OpenHands app's name for its sandboxes' host)"
  echo "127.0.0.1 host.docker.internal" | $SUDO tee -a /etc/hosts >/dev/null
fi

if [[ -x $venv/bin/python && -f $venv/.complete ]]; then
  echo "OpenHands app venv ready: $venv"
  echo "$venv/bin/python" >"$cache/python"
  exit 0
fi

py=${GOHANDS_PYTHON:-}
if [[ -z $py ]]; then
  for c in /root/.pyenv/versions/3.12*/bin/python3 /root/.pyenv/versions/3.1[3-9]*/bin/python3 \
    "$(command -v python3.12 || true)" "$(command -v python3.13 || true)" "$(command -v python3 || true)"; do
    [[ -n $c && -x $c ]] || continue
    if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then py=$c; break; fi
  done
fi
if [[ -z $py ]]; then
  echo "22-openhands-app.sh: the OpenHands app needs Python >= 3.12 and none was found" >&2
  echo "  (looked in /root/.pyenv/versions/3.1[2-9]*, python3.12, python3.13, python3); set GOHANDS_PYTHON." >&2
  exit 1
fi

echo "installing the OpenHands app (${pins[*]}) into $venv with $("$py" -V)"
mkdir -p "$cache"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import openhands.app_server.app, openhands.app_server.sandbox.process_sandbox_service'
touch "$venv/.complete"
echo "$venv/bin/python" >"$cache/python"
echo "OpenHands app venv ready: $venv"
