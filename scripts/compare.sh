#!/usr/bin/env bash
# gohands beside the Python reference (openhands-sdk 1.58.2; REFERENCE=1.43.1
# for the older release): installs the reference's venv if needed
# (scripts/deps.d/21-reference158.sh, or 20-reference.sh), builds
# gohands and bench/compare, and runs the same jobs through both,
# alternating, printing one Markdown table of medians and ratios. Flags go
# to bench/compare, e.g.:
#
#   scripts/compare.sh                      # full size: 200 steps, 3 runs (~30 min)
#   scripts/compare.sh -steps 20 -runs 1 -replay-steps 50 -conversations 10 -v
#   scripts/compare.sh -jobs crowd,startup -concurrent 1000 -stored 10000  # the server rows only
#
# The reference's figures include its interpreter start-up where the job
# is a process (it takes seconds to import); replay and resume are timed
# inside each process. See bench/compare for what each row measures.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "compare.sh: go is not installed" >&2; exit 1; }
deps=./scripts/deps.d/21-reference158.sh
[[ ${REFERENCE:-1.58.2} == 1.43.1 ]] && deps=./scripts/deps.d/20-reference.sh
"$deps" >&2
py=$("$deps" --print)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -o "$bin/gohands" ./cmd/gohands # static, as scripts/image.sh ships it
go build -o "$bin/compare" ./bench/compare
ver=$("$py" -c 'import importlib.metadata as m; print(m.version("openhands-sdk"))')
"$bin/compare" -gohands "$bin/gohands" -python "$py" -reference-version "$ver" "$@"
echo
stat -c %s "$bin/gohands" | awk '{printf "gohands binary: %.1f MB unstripped\n", $1 / 1e6}'
