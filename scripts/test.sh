#!/usr/bin/env bash
# The project's test command: installs what the tests need, then runs the
# format check, go vet, staticcheck and the race-enabled test suite.
# Any missing prerequisite is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI=${CI:-true}

command -v go >/dev/null || { echo "test.sh: go is not installed" >&2; exit 1; }
./scripts/deps.sh

echo "== go mod download"
go mod download

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $unformatted ]]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi

fix_and_vet() {
  echo "== go fix (the modernizers leave nothing to change)"
  if ! go fix -diff ./...; then
    echo "go fix would change the files above: run 'go fix ./...'"; return 1
  fi
  echo "== go vet"
  go vet ./... # after go fix: it reuses the export data fix compiled
}

windows_build() {
  echo "== GOOS=windows go build (the SDK builds off Unix)"
  # The CLI, examples, benchmarks and cross-process tests are Unix-only; the
  # SDK, the agent server and agent/acp must build for Windows (the file
  # store's Backend fails there with ErrUnsupported; process groups are
  # Unix-only, internal/procgroup).
  GOOS=windows go build $(GOOS=windows go list -e -f '{{if .GoFiles}}{{.ImportPath}}{{end}}' ./... | grep -vE '/(cmd|examples|tests|bench)/')
}

static_check() {
  echo "== staticcheck"
  go tool staticcheck ./...
}

# The three gates need nothing from each other nor from the tests: they
# run at once, beside go test, each into its own log, printed in order when
# the tests are done (a failed one's to stderr, and the run fails). One
# after the other before go test they took 6 min of a fresh clone's run at
# load 10-15, mostly waiting for a share of the CPU (staticcheck: 440 s for
# 57 s of CPU at load 25).
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
gates=(fix_and_vet windows_build static_check)
pids=()
for g in "${gates[@]}"; do
  "$g" >"$logs/$g" 2>&1 &
  pids+=($!)
done

echo "== go test -race"
# Six packages at once, not GOMAXPROCS (2 here): the long packages
# (tests/pyclient, bench/compare, cmd/gohands) mostly wait for programs they
# start, and on a loaded machine each running process gets its share of the
# CPU, so the suite's wall time falls with more of them. go test starts the
# packages in the order named: the longest first (tests/pyclient, 490 s at
# load 10-15, started last in ./...'s order at 507 s and ended the run), so
# none of them starts when the rest are done.
failed=0
go test -race -p 6 -timeout 30m ./tests/pyclient ./bench/compare ./skill ./cmd/gohands \
  ./conversation/filestore ./llm/openai ./server ./eval ./agent/acp ./... "$@" || failed=1

for i in "${!gates[@]}"; do
  if wait "${pids[i]}"; then
    cat "$logs/${gates[i]}"
  else
    cat "$logs/${gates[i]}" >&2
    echo "test.sh: ${gates[i]} failed" >&2
    failed=1
  fi
done
((failed == 0)) || exit 1

echo "== tests/otelcol (a module of its own: traces into the OpenTelemetry Collector's OTLP receiver)"
(cd tests/otelcol && go vet ./... && go test -race -timeout 10m ./...)
