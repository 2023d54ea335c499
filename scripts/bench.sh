#!/usr/bin/env bash
# Runs the persistence, terminal and agent-loop benchmarks and prints a table: benchmark, ns/op, p50
# where measured, CPU time per op (user+system of the whole process: on a
# busy machine wall time includes waiting for other processes), the target
# on a 2-core machine, and the Python reference's figure for the same work.
# BENCHTIME sets -benchtime; GOHANDS_BENCH_DIR puts the conversations
# elsewhere than the temp dir (e.g. /dev/shm). Extra arguments go to
# go test (e.g. -count=3).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "bench.sh: go is not installed" >&2; exit 1; }

out=$(go test -run '^$' -benchmem -benchtime "${BENCHTIME:-1s}" \
  -bench '^(BenchmarkEventPersist|BenchmarkActionCyclePersist|BenchmarkReplay1000|BenchmarkRecovery1000|BenchmarkSearch2000|BenchmarkFileCreateFloor)$' \
  "$@" ./conversation/)
# The terminal round trip and the agent loop (issues 3 and 5).
out+=$'\n'$(go test -run '^$' -benchtime 2000x -bench '^BenchmarkTerminalEcho$' "$@" ./tools/terminal/)
out+=$'\n'$(go test -run '^$' -benchmem -benchtime 3000x -bench '^BenchmarkAgentStep$' "$@" ./agent/)
out+=$'\n'$(go test -run '^$' -benchtime 1x -bench '^BenchmarkIdleConversationMemory$' "$@" ./agent/)
echo "$out" >&2

echo "$out" | awk '
BEGIN {
  target["BenchmarkEventPersist/write-through"] = "(floor-bound)"; ref["BenchmarkEventPersist/write-through"] = "0.166 ms (p50)"
  target["BenchmarkEventPersist/write-behind"] = "p50 <= 15 us";  ref["BenchmarkEventPersist/write-behind"] = "0.166 ms (p50)"
  target["BenchmarkActionCyclePersist/write-through"] = "(floor-bound)"; ref["BenchmarkActionCyclePersist/write-through"] = "0.36 ms (p50)"
  target["BenchmarkActionCyclePersist/write-behind"] = "p50 <= 30 us"; ref["BenchmarkActionCyclePersist/write-behind"] = "0.36 ms (p50)"
  target["BenchmarkFileCreateFloor"] = "(floor)";            ref["BenchmarkFileCreateFloor"] = "-"
  target["BenchmarkReplay1000/open"] = "<= 2 ms";            ref["BenchmarkReplay1000/open"] = "29.5 ms (full replay)"
  target["BenchmarkReplay1000/open-no-cache"] = "-";         ref["BenchmarkReplay1000/open-no-cache"] = "29.5 ms (full replay)"
  target["BenchmarkReplay1000/decode-all"] = "-";            ref["BenchmarkReplay1000/decode-all"] = "29.5 ms (full replay)"
  target["BenchmarkRecovery1000"] = "<= 3 ms";               ref["BenchmarkRecovery1000"] = "57.5 ms"
  target["BenchmarkSearch2000/entries"] = "<= 0.5 ms";       ref["BenchmarkSearch2000/entries"] = "7.7 ms"
  target["BenchmarkSearch2000/raw"] = "-";                   ref["BenchmarkSearch2000/raw"] = "7.7 ms"
  target["BenchmarkTerminalEcho"] = "p50 <= 2 ms";           ref["BenchmarkTerminalEcho"] = "-"
  target["BenchmarkAgentStep/write-through"] = "-";          ref["BenchmarkAgentStep/write-through"] = "~100 steps/s"
  target["BenchmarkAgentStep/write-behind"] = "<= 200 us/step"; ref["BenchmarkAgentStep/write-behind"] = "~100 steps/s"
  target["BenchmarkAgentStep/memory"] = "-";                 ref["BenchmarkAgentStep/memory"] = "~100 steps/s"
  target["BenchmarkIdleConversationMemory"] = "extra <= 0.5 MB"; ref["BenchmarkIdleConversationMemory"] = "~22 MB/conv"
  printf "%-42s %12s %12s %12s %14s  %s\n", "benchmark", "ns/op", "p50 ns|extra", "cpu ns/op", "target", "reference"
}
/^Benchmark/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  nsop = ""; p50 = "-"; cpu = "-"
  for (i = 2; i <= NF; i++) {
    if ($(i) == "ns/op") nsop = $(i-1)
    if ($(i) == "p50-ns") p50 = $(i-1)
    if ($(i) == "cpu-ns/op" || $(i) == "cpu-ns/step") cpu = $(i-1)
    if ($(i) == "extra-B") p50 = $(i-1) " extra-B"
  }
  t = (name in target) ? target[name] : "-"; r = (name in ref) ? ref[name] : "-"
  printf "%-42s %12s %12s %12s %14s  %s\n", name, nsop, p50, cpu, t, r
}'
