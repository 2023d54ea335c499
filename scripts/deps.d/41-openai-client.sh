#!/usr/bin/env bash
# OpenAI's Python client, the peer of the server's OpenAI-compatible
# gateway test (server TestGatewayOpenAIClient), pinned, in a venv of its
# own. Any Python >= 3.9 does. The venv is cached under
# $GOHANDS_CACHE/openai-client/venv-<hash of the pins>; tests find its
# python through internal/testenv.OpenAIClientPython ($GOHANDS_OPENAI_PYTHON,
# else the path this script writes to $GOHANDS_CACHE/openai-client/python).
set -euo pipefail
pins=(openai==2.54.0)
cache=${GOHANDS_CACHE:-$HOME/.cache/gohands}/openai-client
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
venv=$cache/venv-$key
if [[ -x $venv/bin/python && -f $venv/.complete ]]; then
  echo "$venv/bin/python" >"$cache/python"
  exit 0
fi
py=${GOHANDS_PYTHON:-$(command -v python3 || true)}
if [[ -z $py ]] || ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  echo "41-openai-client.sh: needs Python >= 3.9 (python3, or set GOHANDS_PYTHON)" >&2
  exit 1
fi
echo "installing ${pins[*]} into $venv with $("$py" -V)"
mkdir -p "$cache"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import openai'
touch "$venv/.complete"
echo "$venv/bin/python" >"$cache/python"
echo "openai client venv ready: $venv"
