#!/usr/bin/env bash
# A Docker engine for the sandbox tests (workspace/docker, serve --runtime
# docker, run --sandbox docker): Debian's docker.io, dockerd started in the
# background when none answers, and the sandbox's base image
# (scripts/image.sh --base: debootstrap once, then cached by its package
# list). Idempotent. Fails with the daemon's log when it cannot start one.
set -euo pipefail
log=${GOHANDS_CACHE:-$HOME/.cache/gohands}/docker/dockerd.log

engine_up() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# The base image of the sandbox (scripts/image.sh --base, cached by its
# package list) needs debootstrap; the tests add the gohands layer.
base_image() {
  if ! command -v debootstrap >/dev/null; then
    echo "== apt-get install debootstrap"
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  "$(dirname "$0")/../image.sh" --base >/dev/null
}
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive

if command -v docker >/dev/null && engine_up; then
  base_image
  exit 0
fi
if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
  if ! command -v apt-get >/dev/null; then
    echo "50-docker.sh: docker is missing and there is no apt-get to install it; install a Docker engine" >&2
    exit 1
  fi
  echo "== apt-get install docker.io"
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi
if engine_up; then
  base_image # the package's service started it
  exit 0
fi
if [[ -n $SUDO ]] && ! sudo -n true 2>/dev/null; then
  echo "50-docker.sh: no Docker engine answers and starting dockerd needs root; start it (sudo dockerd &) or run as root" >&2
  exit 1
fi
mkdir -p "$(dirname "$log")"
echo "== starting dockerd in the background (log: $log)"
# setsid: the daemon outlives this script and the test command's process group.
$SUDO setsid dockerd >"$log" 2>&1 </dev/null &
for _ in $(seq 60); do
  if engine_up; then
    docker version --format 'docker engine {{.Server.Version}} up'
    base_image
    exit 0
  fi
  if ! pgrep -x dockerd >/dev/null; then break; fi
  sleep 1
done
echo "50-docker.sh: dockerd did not come up; last lines of $log:" >&2
tail -n 30 "$log" >&2
exit 1
