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
  "$@" ./conversation/filestore/)
# The terminal round trip and the agent loop (issues 3 and 5).
out+=$'\n'$(go test -run '^$' -benchtime 2000x -bench '^BenchmarkTerminalEcho$' "$@" ./tools/terminal/)
out+=$'\n'$(go test -run '^$' -benchmem -benchtime 3000x -bench '^BenchmarkAgentStep$' "$@" ./agent/)
out+=$'\n'$(go test -run '^$' -benchtime 1x -bench '^BenchmarkIdleConversationMemory$' "$@" ./agent/)
# Per-step cost against the history (issue 20): 20 steps after 10, 100 and
# 1,000 steps of history.
out+=$'\n'$(go test -run '^$' -benchmem -benchtime 20x -bench '^BenchmarkStepHistory$' "$@" ./agent/)
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
  target["BenchmarkReplay1000/full"] = "<= 20 ms";           ref["BenchmarkReplay1000/full"] = "see compare.sh"
  target["BenchmarkStepHistory/history=10"] = "-";            ref["BenchmarkStepHistory/history=10"] = "-"
  target["BenchmarkStepHistory/history=100"] = "-";           ref["BenchmarkStepHistory/history=100"] = "-"
  target["BenchmarkStepHistory/history=1000"] = "cpu <= 2x h=10"; ref["BenchmarkStepHistory/history=1000"] = "-"
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

# The binary (issue 20): gohands' size, and what the biggest modules add
# to a program that already has net/http, encoding/json and crypto/tls
# (each imported alone: a module's share inside gohands is smaller, since
# the linker keeps only what is used). BENCH_SIZES=0 skips the module rows.
echo
szdir=$(mktemp -d)
# Static, as scripts/image.sh ships it: a cgo build also maps libc and
# ld.so, ~1.5 MB more peak RSS on every start.
CGO_ENABLED=0 go build -o "$szdir/gohands" ./cmd/gohands
CGO_ENABLED=0 go build -ldflags='-s -w' -o "$szdir/gohands-stripped" ./cmd/gohands
printf '%-48s %12s %10s\n' "binary" "MB" "target"
printf '%-48s %12.1f %10s\n' "gohands, unstripped" "$(stat -c %s "$szdir/gohands" | awk '{print $1/1e6}')" "<= 40"
printf '%-48s %12.1f %10s\n' "gohands, stripped (-s -w)" "$(stat -c %s "$szdir/gohands-stripped" | awk '{print $1/1e6}')" "-"
# A reachable reflect Method/MethodByName call (text/template's evalField,
# for one) makes the linker keep every exported method of every type that
# may be converted to an interface: it cost gohands tens of MB until the
# provider SDKs and glamour went. This row names such functions; it should
# stay empty.
dce=$(go build -ldflags=-dumpdep -o /dev/null ./cmd/gohands 2>&1 | { grep -o '^[^ ]* <ReflectMethod>' || true; } | sort -u | sed 's/ <ReflectMethod>//' | paste -sd, -)
printf '%-48s %12s %10s\n' "functions disabling method dead-code removal" "${dce:-none}" "none"
if command -v /usr/bin/time >/dev/null; then
  rss=$(/usr/bin/time -f %M "$szdir/gohands" --version 2>&1 >/dev/null | tail -1)
  printf '%-48s %12.1f %10s\n' "peak RSS of gohands --version (MB)" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "-"
  # The start-up floor (issue 20): a program that imports what gohands
  # imports and does nothing else. Every gohands start pays its peak RSS
  # before main runs: package inits touch pages all over the binary, and
  # the kernel maps the 64 KB around each page touched. It is built in
  # place (an overlay) so that it may import gohands' internal packages.
  fl=$szdir/initfloor; mkdir -p "$fl"
  { echo 'package main'; echo 'import ('; go list -f '{{range .Imports}}{{printf "_ %q\n" .}}{{end}}' ./cmd/gohands
    echo ')'; echo 'func main() {}'; } >"$fl/main.go"
  printf '{"Replace":{"%s/cmd/gohands/internal/initfloor/main.go":"%s/main.go"}}' "$PWD" "$fl" >"$fl/overlay.json"
  CGO_ENABLED=0 go build -overlay "$fl/overlay.json" -o "$fl/bin" ./cmd/gohands/internal/initfloor
  rss=$(/usr/bin/time -f %M "$fl/bin" 2>&1 | tail -1)
  printf '%-48s %12.1f %10s\n' "peak RSS, gohands' imports, empty main (MB)" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "-"
fi
if [[ ${BENCH_SIZES:-1} != 0 ]]; then
  size_of() { # name import-path...
    local d=$szdir/$1; shift; mkdir -p "$d"
    { echo 'package main'; echo 'import (_ "net/http"; _ "encoding/json"; _ "crypto/tls"'
      for i in "$@"; do echo "_ \"$i\""; done; echo ')'; echo 'func main() {}'; } >"$d/main.go"
    (cd "$d" && cp "$OLDPWD/go.mod" "$OLDPWD/go.sum" . && sed -i 's|^module .*|module sizecheck|' go.mod &&
      CGO_ENABLED=0 go build -o bin . && stat -c %s bin)
  }
  base=$(size_of base)
  if command -v /usr/bin/time >/dev/null; then
    rss=$(/usr/bin/time -f %M "$szdir/base/bin" 2>&1 | tail -1)
    printf '%-48s %12.1f %10s\n' "peak RSS, net/http+json+tls, empty main (MB)" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "-"
  fi
  for m in "mcp-go-sdk github.com/modelcontextprotocol/go-sdk/mcp" \
           "pgx github.com/jackc/pgx/v5 github.com/jackc/pgx/v5/pgxpool" \
           "bubbletea+lipgloss charm.land/bubbletea/v2 charm.land/lipgloss/v2" \
           "chromedp github.com/chromedp/chromedp"; do
    set -- $m
    name=$1; shift
    printf '%-48s %12.1f %10s\n' "+ $name (alone)" "$(( $(size_of "${name// /-}" "$@") - base ))e-6" "-"
  done
fi
rm -rf "$szdir"

# The agent server (issue 11): `gohands serve` and the reference's
# openhands-agent-server under the same Go client and zero-latency scripted
# model, side by side. Rates are wall-clock; the per-CPU-second rows divide
# by the server's own CPU time, which a busy machine distorts less.
# BENCH_SERVERS=gohands leaves the reference out (it
# needs the venv of scripts/deps.d/20-reference.sh and a few minutes).
servers=${BENCH_SERVERS:-gohands|reference}
sout=$(go test -run '^$' -benchtime 1x -timeout 60m -bench "^BenchmarkServe(ColdStart|ConversationRSS|AgentSteps|SocketFanout)\$/^($servers)\$" "$@" ./tests/pyclient/)
echo "$sout" >&2
echo
echo "$sout" | awk '
/^BenchmarkServe/ {
  split($1, p, "/"); bench = p[1]; srv = p[2]; sub(/-[0-9]+$/, "", srv)
  for (i = 3; i < NF; i++) if ($(i+1) ~ /[a-zA-Z]/ && $(i) ~ /^[0-9.e+-]+$/) v[bench "|" $(i+1) "|" srv] = $(i)
}
END {
  n = split("BenchmarkServeColdStart|ms-to-health|cold start to 200 /health (ms)|<= 20;" \
            "BenchmarkServeColdStart|idle-MB|idle RSS (MB)|<= 20;" \
            "BenchmarkServeConversationRSS|MB/created-conv|RSS per idle created conversation (MB)|<= 0.5;" \
            "BenchmarkServeConversationRSS|MB/conv-after-run|RSS per conversation after a terminal run (MB)|-;" \
            "BenchmarkServeAgentSteps|steps/s|agent steps/s, all conversations|>= 5000;" \
            "BenchmarkServeAgentSteps|steps/cpu-s|agent steps per server CPU second|-;" \
            "BenchmarkServeSocketFanout|frames/s|events/s to 100 subscribers (reference: 40)|-;" \
            "BenchmarkServeSocketFanout|frames/cpu-s|events per server CPU second, same run|-", rows, ";")
  printf "%-48s %12s %12s %10s\n", "agent server", "gohands", "reference", "target"
  for (r = 1; r <= n; r++) {
    split(rows[r], f, "|")
    g = v[f[1] "|" f[2] "|gohands"]; ref = v[f[1] "|" f[2] "|reference"]
    printf "%-48s %12s %12s %10s\n", f[3], (g == "" ? "-" : g), (ref == "" ? "-" : ref), f[4]
  }
}'

# One scripted step (message, run, text reply, finished) through a
# conversation in the client's process and through a remote conversation
# on an agent server process over loopback (issue 12): gohands' client on
# gohands serve and on the reference's server, the reference's Python
# client locally and on its own server. BENCH_SERVERS=gohands leaves the
# reference out.
if [[ $servers == gohands ]]; then rt='^BenchmarkRoundTrip$/^gohands$/^(local|gohands-server)$'; else rt='^BenchmarkRoundTrip$'; fi
rout=$(go test -run '^$' -benchtime 1x -timeout 40m -bench "$rt" "$@" ./tests/pyclient/)
echo "$rout" >&2
echo
echo "$rout" | awk '
/^BenchmarkRoundTrip/ {
  name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkRoundTrip\//, "", name)
  for (i = 3; i < NF; i++) if ($(i+1) ~ /[a-zA-Z]/ && $(i) ~ /^[0-9.e+-]+$/) v[name "|" $(i+1)] = $(i)
}
END {
  printf "%-48s %12s %12s\n", "one scripted step (ms, mean / p50)", "gohands", "reference"
  row("local (in the client process)", "local")
  row("remote, own server over loopback", "gohands-server", "reference-server")
  g = v["gohands/reference-server|ms/step"]
  printf "%-48s %12s %12s\n", "remote, Go client on the reference server", (g == "" ? "-" : g " / " v["gohands/reference-server|p50-ms"]), "-"
}
function row(label, gw, rw,   g, r) {
  if (rw == "") rw = gw
  g = v["gohands/" gw "|ms/step"]; r = v["reference/" rw "|ms/step"]
  printf "%-48s %12s %12s\n", label, (g == "" ? "-" : g " / " v["gohands/" gw "|p50-ms"]), (r == "" ? "-" : r " / " v["reference/" rw "|p50-ms"])
}'

# The sandbox (issue 13): a container of the gohands image from creation to a
# 200 /health, its idle memory, the image's size, and the time per agent step
# (a scripted model asking for a shell command) in a container versus in
# this process. Needs a Docker engine (scripts/deps.d/50-docker.sh); the
# image is built from this tree (scripts/image.sh, cached). BENCH_DOCKER=0
# leaves it out.
if [[ ${BENCH_DOCKER:-1} != 0 ]]; then
  dout=$(go test -run '^$' -benchtime "${BENCH_DOCKER_N:-5}x" -timeout 30m -bench '^Benchmark(ColdStart|Step)$' "$@" ./workspace/docker/)
  echo "$dout" >&2
  echo
  echo "$dout" | awk '
  /^Benchmark(ColdStart|Step)/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 3; i < NF; i++) if ($(i+1) ~ /[a-zA-Z]/ && $(i) ~ /^[0-9.e+-]+$/) v[name "|" $(i+1)] = $(i)
  }
  END {
    printf "%-48s %12s %10s %12s\n", "sandbox (docker)", "gohands", "target", "reference"
    printf "%-48s %12s %10s %12s\n", "cold start: container creation to 200 /health (ms)", v["BenchmarkColdStart|ms-to-health"], "<= 1000", "~6000"
    printf "%-48s %12s %10s %12s\n", "image size (MB)", v["BenchmarkColdStart|image-MB"], "<= 250", "1640"
    printf "%-48s %12s %10s %12s\n", "idle container memory (MB)", v["BenchmarkColdStart|idle-MB"], "-", "-"
    printf "%-48s %12s %10s %12s\n", "ms per agent step, local server", v["BenchmarkStep/local|ms/step"], "-", "-"
    printf "%-48s %12s %10s %12s\n", "ms per agent step, in a container", v["BenchmarkStep/docker|ms/step"], "-", "-"
  }'
fi

# Several servers on one PostgreSQL (issue 19): append latency into the
# database, agent steps per second on three `gohands serve` nodes versus
# one (think steps of an instant scripted model, a client talking to
# random nodes; all nodes on this machine), and failover time from a
# node's SIGKILL to its conversations' next action on another node
# (--lease 2s). Needs PostgreSQL (scripts/deps.d/45-postgres.sh);
# BENCH_CLUSTER=0 leaves it out.
if [[ ${BENCH_CLUSTER:-1} != 0 ]]; then
  cout=$(go test -run '^$' -benchtime 2000x -bench '^BenchmarkAppend$' "$@" ./conversation/pgstore/)
  cout+=$'\n'$(go test -run '^$' -benchtime 1x -timeout 30m -bench '^Benchmark(ClusterSteps|Failover)$' "$@" ./tests/cluster/)
  echo "$cout" >&2
  echo
  echo "$cout" | awk '
  /^Benchmark(Append|ClusterSteps|Failover)/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 3; i < NF; i++) if ($(i+1) ~ /[a-zA-Z]/ && $(i) ~ /^[0-9.e+-]+$/) v[name "|" $(i+1)] = $(i)
  }
  END {
    printf "%-48s %12s\n", "PostgreSQL, several nodes", "gohands"
    printf "%-48s %12s\n", "append p50 (us)", v["BenchmarkAppend|p50-µs"]
    printf "%-48s %12s\n", "append p99 (us)", v["BenchmarkAppend|p99-µs"]
    printf "%-48s %12s\n", "appends/s, one conversation", v["BenchmarkAppend|events/s"]
    printf "%-48s %12s\n", "agent steps/s, 1 node", v["BenchmarkClusterSteps/nodes=1|steps/s"]
    printf "%-48s %12s\n", "agent steps/s, 3 nodes", v["BenchmarkClusterSteps/nodes=3|steps/s"]
    printf "%-48s %12s\n", "failover, kill to next action (ms, mean)", v["BenchmarkFailover|failover-ms"]
    printf "%-48s %12s\n", "failover, kill to next action (ms, max)", v["BenchmarkFailover|max-failover-ms"]
  }'
fi
