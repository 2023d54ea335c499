#!/usr/bin/env bash
# Builds the gohands agent-server image on this machine, without a registry:
#
#   1. a base image, gohands-base:<hash>: a Debian minbase root filesystem made
#      by debootstrap with the packages below, trimmed (docs, man pages,
#      locales, apt caches) and `docker import`ed. <hash> covers the package
#      list, the suite, the trim step and the architecture, so the base is
#      rebuilt only when one of those changes; the root filesystem tarball is
#      kept under $GOHANDS_CACHE/docker so a wiped engine re-imports it.
#   2. the gohands image, gohands:<binary hash>, tagged also gohands:latest
#      (or $GOHANDS_IMAGE): the base plus the static gohands binary as the
#      entry point (`gohands serve`), rebuilt only when the binary changes.
#
# Usage: scripts/image.sh            build both (the binary from this tree)
#        scripts/image.sh --base     build the base only (scripts/deps.d does)
# Environment: GOHANDS_BIN uses that static binary instead of building one;
# GOHANDS_IMAGE names the final tag (default gohands:latest);
# GOHANDS_DEBIAN_MIRROR overrides the mirror read from /etc/apt.
# Prints the final image reference on stdout; progress goes to stderr.
# Needs root (debootstrap) and a running Docker engine (scripts/deps.d/50-docker.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(bash coreutils git python3 ripgrep ca-certificates)
suite=${GOHANDS_DEBIAN_SUITE:-bookworm}
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
cache=${GOHANDS_CACHE:-$HOME/.cache/gohands}/docker
image=${GOHANDS_IMAGE:-gohands:latest}
mkdir -p "$cache"
# One build at a time (test packages run this concurrently).
exec 9>"$cache/image.lock"
flock 9
say() { echo "image.sh: $*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null || die "docker is not installed (scripts/deps.d/50-docker.sh installs it)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ||
  die "no Docker engine answers (scripts/deps.d/50-docker.sh starts one)"

# trim runs inside the new root filesystem; part of the base's hash.
read -r -d '' trim <<'TRIM' || true
rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/lintian \
  /usr/share/locale/* /usr/share/i18n /var/cache/apt/* /var/lib/apt/lists/* \
  /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/log/* /usr/share/common-licenses \
  /usr/share/bash-completion /usr/share/zsh /usr/share/gitweb /usr/share/perl5/Git/SVN* \
  /usr/share/git-core/templates/hooks/*
# perl's full library (git's add -i, send-email and svn use it; git itself is C);
# perl-base's interpreter and modules stay.
rm -rf /usr/share/perl/5.* /usr/lib/*-linux-gnu/perl/5.* /usr/lib/*-linux-gnu/libperl.so*
find /usr/lib/python3* -name __pycache__ -prune -exec rm -rf {} +
rm -rf /usr/lib/python3*/test /usr/lib/python3*/idlelib /usr/lib/python3*/tkinter \
  /usr/lib/python3*/ensurepip /usr/lib/python3*/lib2to3 /usr/lib/python3*/pydoc_data
mkdir -p /workspace /tmp && chmod 1777 /tmp
TRIM

raw_hash=$(printf '%s\n' "${packages[*]}" "$suite" "$arch" | sha256sum | cut -c1-12)
base_hash=$(printf '%s\n' "$raw_hash" "$trim" | sha256sum | cut -c1-12)
base=gohands-base:$base_hash
# The debootstrap output, untrimmed: the slow part, keyed by the package list.
raw=$cache/debootstrap-$raw_hash.tar
# The trimmed root filesystem, keyed also by the trim step.
rootfs=$cache/rootfs-$base_hash.tar

mirror() {
  if [[ -n ${GOHANDS_DEBIAN_MIRROR:-} ]]; then echo "$GOHANDS_DEBIAN_MIRROR"; return; fi
  # The first deb822 or one-line source for the main archive (not -security).
  local m
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v security | grep -i debian | head -1 || true)
  [[ -n $m ]] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' | grep -v security | grep -i debian | head -1 || true)
  [[ -n $m ]] || die "no Debian mirror found in /etc/apt/sources.list{,.d/*}; set GOHANDS_DEBIAN_MIRROR to one this machine can reach"
  echo "$m"
}

build_base() {
  if docker image inspect "$base" >/dev/null 2>&1; then return; fi
  [[ $(id -u) -eq 0 ]] || die "building the base root filesystem needs root (debootstrap, chroot)"
  local dir
  dir=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
  if [[ ! -s $rootfs ]]; then
    if [[ -s $raw ]]; then
      tar -C "$dir" -xf "$raw"
    else
      command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
      local m inc
      m=$(mirror)
      inc=$(IFS=,; echo "${packages[*]}")
      say "debootstrap --variant=minbase $suite from $m with $inc (a few minutes, once)"
      debootstrap --variant=minbase --include="$inc" --arch="$arch" "$suite" "$dir" "$m" >"$cache/debootstrap.log" 2>&1 ||
        { tail -n 20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
      tar --numeric-owner -C "$dir" -cf "$raw.tmp" . && mv "$raw.tmp" "$raw"
    fi
    chroot "$dir" /bin/sh -c "$trim"
    tar --numeric-owner -C "$dir" -cf "$rootfs.tmp" .
    mv "$rootfs.tmp" "$rootfs"
    rm -f "$cache"/rootfs-*.tar.tmp
  fi
  rm -rf "$dir"
  trap - EXIT
  say "docker import $rootfs as $base"
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' --change 'WORKDIR /workspace' --change 'CMD ["/bin/bash"]' \
    "$rootfs" "$base" >/dev/null
  # Older bases and their tarballs are of no further use.
  for old in $(docker images --format '{{.Repository}}:{{.Tag}}' gohands-base); do
    [[ $old == "$base" ]] || docker rmi "$old" >/dev/null 2>&1 || true
  done
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -name "rootfs-$base_hash.tar" -delete
}

build_base
if [[ ${1:-} == --base ]]; then
  echo "$base"
  exit 0
fi

bin=${GOHANDS_BIN:-}
if [[ -z $bin ]]; then
  command -v go >/dev/null || die "go is not installed (or set GOHANDS_BIN to a static gohands binary)"
  bin=$cache/gohands
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin.tmp" ./cmd/gohands
  mv "$bin.tmp" "$bin"
fi
[[ -x $bin ]] || die "$bin is not an executable"
if file "$bin" 2>/dev/null | grep -q 'dynamically linked'; then
  die "$bin is dynamically linked; the image needs a static binary (CGO_ENABLED=0)"
fi
bin_hash=$( (sha256sum "$bin" | cut -c1-64; echo "$base") | sha256sum | cut -c1-12)
tag=gohands:$bin_hash
if ! docker image inspect "$tag" >/dev/null 2>&1; then
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  cp "$bin" "$ctx/gohands"
  cat >"$ctx/Dockerfile" <<EOF
FROM $base
COPY gohands /usr/local/bin/gohands
LABEL org.gohands.base="$base"
ENV OH_CONVERSATIONS_PATH=/var/lib/gohands/conversations OH_BASH_EVENTS_DIR=/var/lib/gohands/bash_events
EXPOSE 8000
ENTRYPOINT ["/usr/local/bin/gohands", "serve"]
CMD ["--host", "0.0.0.0", "--port", "8000"]
EOF
  say "docker build $tag"
  DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null 2>"$cache/build.log" ||
    { cat "$cache/build.log" >&2; die "docker build failed"; }
  rm -rf "$ctx"
  trap - EXIT
fi
if [[ $(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null) != "$(docker image inspect -f '{{.Id}}' "$tag")" ]]; then
  docker tag "$tag" "$image"
fi
# Binary-hash tags that no named tag (latest, test...) uses any more are
# stale builds: remove them (an image a container still uses stays).
keep=$(docker images --format '{{.Tag}} {{.ID}}' gohands | awk '!(length($1) == 12 && $1 ~ /^[0-9a-f]+$/) {print $2}')
docker images --format '{{.Tag}} {{.ID}}' gohands | while read -r t id; do
  if [[ $t =~ ^[0-9a-f]{12}$ && gohands:$t != "$tag" ]] && ! grep -qx "$id" <<<"$keep"; then
    docker rmi "gohands:$t" >/dev/null 2>&1 || true
  fi
done
echo "$image"
