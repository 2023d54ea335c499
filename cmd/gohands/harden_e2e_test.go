//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// TestE2ECredentialsNotReadable: the agent's commands run under gohands
// and can read its /proc files. The model's key (from the environment or
// --api-key), a tracing backend's key (OTEL_EXPORTER_OTLP_HEADERS) and the
// secrets given on the command line are not in them, not even reversed
// (which masking would not catch).
func TestE2ECredentialsNotReadable(t *testing.T) {
	t.Parallel()
	const envKey = "sk-envkey-0a1b2c3d4e5f6071"
	const flagKey = "sk-flagkey-9z8y7x6w5v4u"
	const flagSecret = "pw-cmdline-5e6f7a8b9c"
	const envSecret = "tok-environ-1f2e3d4c5b"
	const otelKey = "otlp-hdrkey-7c6b5a4d3e"
	cmd := `{ cat /proc/$PPID/environ; echo; cat /proc/$PPID/cmdline; echo; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; echo; done; } 2>/dev/null | tr '\0' '\n' | rev | grep -c . ; ` +
		`{ cat /proc/$PPID/environ /proc/$PPID/cmdline; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; done; } 2>/dev/null | tr '\0' '\n' | rev > ` + "dump.txt"
	for _, viaFlag := range []bool{false, true} {
		t.Run(map[bool]string{false: "env", true: "flag"}[viaFlag], func(t *testing.T) {
			e := newE2E(t,
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{"command": cmd})}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_2", "terminal", map[string]any{"command": "echo $LLM_API_KEY; cat dump.txt | rev | grep -c LLM_MODEL"})}},
				finishReply("done"),
			)
			var env []string
			for _, kv := range e.env {
				if !strings.HasPrefix(kv, "LLM_API_KEY=") {
					env = append(env, kv)
				}
			}
			e.env = append(env, "LLM_API_KEY="+envKey, "DEPLOY_TOKEN="+envSecret, "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer "+otelKey)
			extra := []string{"--secret", "API_PASSWORD=" + flagSecret, "--secret", "DEPLOY_TOKEN"}
			key := envKey
			if viaFlag {
				extra = append(extra, "--api-key", flagKey)
				key = flagKey
			}
			r := e.mustRun(0, e.args(append(extra, "read the credentials")...)...)
			dump, err := os.ReadFile(filepath.Join(e.work, "dump.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(reverse(string(dump)), "LLM_MODEL=openai/gpt-4o") {
				t.Fatalf("the dump did not read gohands' environment:\n%.2000s", dump)
			}
			var texts []string
			texts = append(texts, string(dump), r.stdout, r.stderr)
			for _, req := range e.srv.Requests() {
				texts = append(texts, string(req.RawBody))
			}
			filepath.WalkDir(e.data, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(path)
					texts = append(texts, string(b))
				}
				return nil
			})
			for i, s := range texts {
				for _, v := range []string{key, envKey, flagSecret, envSecret, otelKey} {
					if strings.Contains(s, v) || strings.Contains(s, reverse(v)) {
						t.Errorf("text %d holds %q (or reversed):\n%.3000s", i, v, s)
					}
				}
			}
			if len(e.srv.Requests()) < 3 {
				t.Fatalf("%d model requests", len(e.srv.Requests()))
			}
		})
	}
}

// TestE2EModelTextStripped: escape sequences in everything the model
// writes (text, reasoning, thought, tool names, arguments, the finish
// message) and in a command's output never reach the terminal.
func TestE2EModelTextStripped(t *testing.T) {
	t.Parallel()
	const evil = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b[8mhidden\x1b[0m\x9b31m\r"
	for _, mode := range [][]string{nil, {"--json"}} {
		e := newE2E(t,
			llmtest.Reply{Text: "text" + evil, Reasoning: "reason" + evil, ToolCalls: []llmtest.ToolCall{
				call("c1", "terminal", map[string]any{"command": "printf 'out\\033]52;c;eA==\\007\\n'", "thought": "th" + evil}),
				call("c2", "no_such_tool"+evil, map[string]any{"x": evil}),
			}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c3", "terminal", `{"command": "echo`+strings.ReplaceAll(fmt.Sprintf("%q", evil), `"`, ``)+`"`)}},
			finishReply("bye"+evil),
		)
		r := e.run(append(e.args(mode...), "go"+evil)...)
		ls := e.run("ls", "--persistence-dir", e.data)
		r.stderr += ls.stdout + ls.stderr
		if r.code != 0 || !strings.Contains(r.stdout, "bye") || !strings.Contains(r.stdout, "hidden") {
			t.Errorf("%v: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
		}
		for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			for i, c := range s {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c < 0xa0 {
					t.Errorf("%v %s: control character %q at %d: %q", mode, name, c, i, s[max(0, i-40):min(len(s), i+40)])
					break
				}
			}
		}
	}
}

// TestE2EDoctor: a damaged middle event makes a resume fail with a clear
// error; gohands doctor reports it, --repair sets it aside, and the
// conversation continues.
func TestE2EDoctor(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "echo one"})}},
		finishReply("first"),
		finishReply("second"),
	)
	e.mustRun(0, e.args("task one")...)
	names, _ := filepath.Glob(filepath.Join(e.dir(), "events", "event-*.json"))
	if len(names) < 6 {
		t.Fatalf("%d events", len(names))
	}
	// The observation of c1: damaged in place, same size.
	var victim string
	for _, n := range names {
		if b, _ := os.ReadFile(n); strings.Contains(string(b), `"ObservationEvent"`) {
			victim = n
			os.WriteFile(n, []byte(strings.Repeat("x", len(b))), 0o644)
			break
		}
	}
	if victim == "" {
		t.Fatal("no observation stored")
	}
	r := e.run(e.args("task two")...)
	if r.code == 0 || !strings.Contains(r.stderr, "damaged") {
		t.Fatalf("resume of a damaged conversation: exit %d\n%s", r.code, r.stderr)
	}
	r = e.run("doctor", "--persistence-dir", e.data, e.id)
	if r.code != 1 || !strings.Contains(r.stdout, filepath.Base(victim)) || !strings.Contains(r.stderr, "--repair") {
		t.Fatalf("doctor: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.run("doctor", "--repair", "--persistence-dir", e.data, e.id)
	if r.code != 0 || !strings.Contains(r.stdout, "repaired") {
		t.Fatalf("doctor --repair: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("the damaged file is still in the log")
	}
	set, _ := filepath.Glob(filepath.Join(e.dir(), "damaged-*", filepath.Base(victim)))
	if len(set) != 1 {
		t.Errorf("the damaged file was not kept aside: %v", set)
	}
	e.mustRun(0, e.args("task two")...)
	if r := e.run("doctor", "--persistence-dir", e.data, e.id); r.code != 0 || !strings.Contains(r.stdout, "ok:") {
		t.Errorf("doctor after the repair and a run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestE2EKillSoak: a scripted run SIGKILLed at random moments and resumed
// each time. After every kill the store is intact (filestore.Check, which
// replays the journal and sets a torn last file aside as any open does),
// and at the end no action ran twice. 4 kills in CI; GOHANDS_FULL=1 runs
// 100 (the figure in the notes).
func TestE2EKillSoak(t *testing.T) {
	t.Parallel()
	kills := 4
	if !testenv.Short() {
		kills = 100
	}
	steps := 3*kills + 10
	var replies []llmtest.Reply
	for i := range steps {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call(fmt.Sprintf("call_%d", i), "terminal",
			map[string]any{"command": fmt.Sprintf("echo step-%d >> log.txt; sleep 0.0%d", i, i%10)})}})
	}
	replies = append(replies, finishReply("all steps done"))
	e := newE2E(t, replies...)
	rng := rand.New(rand.NewPCG(uint64(kills), 7))
	args := e.args("--json", "run the steps")
	killed, torn := 0, 0
	for killed < kills {
		p := e.start(args...)
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		select {
		case <-p.done:
			t.Fatalf("the run ended before kill %d: %v\n%s", killed+1, p.err, p.stderr.String())
		default:
		}
		p.cmd.Process.Signal(unix.SIGKILL)
		<-p.done
		killed++
		args = e.args("--json")
		if r, err := filestore.Check(e.dir()); err != nil || r.Events < 2 {
			// Killed before the task was stored (the system prompt
			// comes first): it must be given again.
			args = e.args("--json", "run the steps")
			continue
		}
		r, err := filestore.Check(e.dir())
		if err != nil || !r.OK() {
			t.Fatalf("kill %d: store check: %v %+v", killed, err, r)
		}
		torn += len(mustGlob(t, filepath.Join(e.dir(), "events", "*"+filestore.TornSuffix)))
	}
	e.mustRun(0, args...)
	b, err := os.ReadFile(filepath.Join(e.work, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for line := range strings.FieldsSeq(string(b)) {
		if seen[line] {
			t.Errorf("%s ran twice", line)
		}
		seen[line] = true
	}
	if r, err := filestore.Check(e.dir()); err != nil || !r.OK() {
		t.Fatalf("final store check: %v %+v", err, r)
	}
	t.Logf("%d kills, %d actions run once each, %d torn files set aside, %d model requests", killed, len(seen), torn, len(e.srv.Requests()))
}

func mustGlob(t *testing.T, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestE2EServeCredentialsNotReadable: gohands serve's agents run commands
// under it, which can read its /proc/<pid>/environ and cmdline. Once the
// configuration is read, the session key, the secret key, the webhooks'
// headers and the model keys are in neither, and the session key still
// guards the API.
func TestE2EServeCredentialsNotReadable(t *testing.T) {
	t.Parallel()
	creds := map[string]string{
		"SESSION_API_KEY":         "sess-key-8c7b6a5d4e3f",
		"OH_SESSION_API_KEYS_0":   "sess-key0-1a2b3c4d5e",
		"OH_SECRET_KEY":           "secret-key-9f8e7d6c5b",
		"OH_WEBHOOKS_0_BASE_URL":  "http://127.0.0.1:1/hook",
		"OH_WEBHOOKS_0_HEADERS":   `{"Authorization":"Bearer hook-token-4d3c2b1a"}`,
		"LLM_API_KEY":             "sk-serve-llm-0f1e2d3c",
		"ANTHROPIC_API_KEY":       "sk-ant-serve-7a6b5c4d",
		"GOHANDS_TEST_NOT_SECRET": "plain-value-kept",
	}
	secretValues := []string{"sess-key-8c7b6a5d4e3f", "sess-key0-1a2b3c4d5e", "secret-key-9f8e7d6c5b", "hook-token-4d3c2b1a", "sk-serve-llm-0f1e2d3c", "sk-ant-serve-7a6b5c4d"}
	home := t.TempDir()
	// Without titles: a title call would take a scripted reply.
	cmd := exec.Command(binPath, "serve", "--host", "127.0.0.1", "--port", "0", "--autotitle=false")
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_") && !strings.HasPrefix(kv, "OH_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home,
		"OH_CONVERSATIONS_PATH="+filepath.Join(home, "convs"), "OH_WORKSPACE_PATH="+filepath.Join(home, "ws"))
	for k, v := range creds {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "serving the agent API on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		close(addr)
	}()
	var url string
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatal("gohands serve ended before serving")
		}
		url = u
	case <-time.After(60 * time.Second):
		t.Fatal("gohands serve did not start within 60s")
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, name := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile(filepath.Join("/proc", pid, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "environ" && !bytes.Contains(b, []byte("plain-value-kept")) {
			t.Fatalf("/proc/%s/environ does not hold the environment:\n%q", pid, b)
		}
		for _, v := range secretValues {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("/proc/%s/%s holds %q", pid, name, v)
			}
		}
	}
	for key, want := range map[string]int{"": 401, "sess-key0-1a2b3c4d5e": 200} {
		req, _ := http.NewRequest("GET", url+"/api/conversations/search", nil)
		if key != "" {
			req.Header.Set("X-Session-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("search with key %q: %d, want %d", key, resp.StatusCode, want)
		}
	}
}

// TestE2EInterruptedCreation: events holding the task but no base state,
// as a kill during the creation leaves them, are taken up by the next run
// of the conversation, with the task given again or not, and the task is
// stored and sent once (issue 17 item 8).
func TestE2EInterruptedCreation(t *testing.T) {
	for _, again := range []bool{false, true} {
		e := newE2E(t, finishReply("first"), finishReply("second"))
		e.mustRun(0, e.args("the one task")...)
		for _, name := range []string{filestore.BaseStateFile, filestore.PrevBaseStateFile} {
			os.Remove(filepath.Join(e.dir(), name))
		}
		args := e.args()
		if again {
			args = e.args("the one task")
		}
		r := e.mustRun(0, args...)
		if !strings.Contains(r.stdout, "second") {
			t.Fatalf("again=%v: the second run did not run:\n%s\n%s", again, r.stdout, r.stderr)
		}
		reqs := e.srv.Requests()
		if n := strings.Count(string(reqs[len(reqs)-1].RawBody), "the one task"); n != 1 {
			t.Errorf("again=%v: the task is in the last request %d times", again, n)
		}
		if _, err := os.Stat(filepath.Join(e.dir(), filestore.BaseStateFile)); err != nil {
			t.Errorf("again=%v: no base state after the run: %v", again, err)
		}
	}
}
