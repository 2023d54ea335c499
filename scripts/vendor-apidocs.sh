#!/usr/bin/env bash
# Refreshes the API documentation viewers that `gohands serve` embeds
# (server/internal/apidocs/assets): Swagger UI (swagger-ui-dist,
# Apache-2.0) for /docs and Redoc (MIT) for /redoc, from npm at pinned
# versions, checked against the tarballs' SHA-256, gzipped (the server
# serves them as they are to browsers that accept gzip). Their licences
# are kept beside them. Run it to move to new versions: change the pins
# and sums, run, commit the assets.
set -euo pipefail
cd "$(dirname "$0")/.."
swagger=swagger-ui-dist@5.35.0
swagger_sum=1b8e891893404ea4c3558b6a87e2a3e494e7eedba41168c2ece5800a391a6ea6
redoc=redoc@3.0.1
redoc_sum=d9666cd5a1cb6c08c6d23f2433b025774a11354823d70357c8f506b988dac189
out=server/internal/apidocs/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$swagger" "$redoc" >/dev/null)
check() { echo "$2  $1" | (cd "$tmp" && sha256sum -c --quiet -) || { echo "vendor-apidocs.sh: $1 does not match its pinned sum" >&2; exit 1; }; }
check "swagger-ui-dist-${swagger#*@}.tgz" "$swagger_sum"
check "redoc-${redoc#*@}.tgz" "$redoc_sum"
mkdir -p "$tmp/s" "$tmp/r" "$out"
tar xzf "$tmp/swagger-ui-dist-${swagger#*@}.tgz" -C "$tmp/s"
tar xzf "$tmp/redoc-${redoc#*@}.tgz" -C "$tmp/r"
rm -f "$out"/*
gzip -9 -n -c "$tmp/s/package/swagger-ui-bundle.js" >"$out/swagger-ui-bundle.js.gz"
gzip -9 -n -c "$tmp/s/package/swagger-ui.css" >"$out/swagger-ui.css.gz"
gzip -9 -n -c "$tmp/r/package/bundles/redoc.standalone.js" >"$out/redoc.standalone.js.gz"
cp "$tmp/s/package/LICENSE" "$out/LICENSE.swagger-ui"
cp "$tmp/s/package/NOTICE" "$out/NOTICE.swagger-ui"
cp "$tmp/s/package/swagger-ui-bundle.js.LICENSE.txt" "$out/LICENSE.swagger-ui-bundle.txt"
cp "$tmp/r/package/LICENSE" "$out/LICENSE.redoc"
printf '%s\n%s\n' "$swagger" "$redoc" >"$out/VERSIONS"
ls -l "$out"
