#!/usr/bin/env bash
# PostgreSQL server binaries for the shared conversation store
# (conversation/pgstore) and its multi-node tests: Debian's postgresql
# package. Tests start their own throw-away server on 127.0.0.1
# (internal/pgtest), running as the postgres user when they run as root;
# nothing is started here. Idempotent: nothing to do when initdb exists.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || [[ -n ${GOHANDS_PG_BIN:-} ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "45-postgres.sh: PostgreSQL is missing and there is no apt-get to install it; install it and set GOHANDS_PG_BIN to its bin directory" >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
echo "== apt-get install postgresql"
$SUDO apt-get update -qq >/dev/null
# Debian may also create and start its default cluster; the tests do not
# use it.
$SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || { echo "45-postgres.sh: initdb still missing after apt-get install" >&2; exit 1; }
