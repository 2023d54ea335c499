package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gohands/gohands/conversation"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// binPath is the gohands binary built by TestMain, the program every
// end-to-end test runs.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gohands-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "gohands")
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building gohands: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireTool fails (under CI=true) or skips a test whose program is
// missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
}

// e2e is one end-to-end scenario: a scripted model server, a workspace,
// a persistence directory and the environment the binary runs in.
type e2e struct {
	t      *testing.T
	srv    *llmtest.Server
	work   string // workspace
	data   string // persistence directory
	home   string // $HOME and $XDG_DATA_HOME
	id     string // conversation id
	env    []string
	config string // --llm-config file with fast retries
	stdin  string // the binary's standard input (empty: none)
	cwd    string // the binary's working directory (empty: work)
}

func newE2E(t *testing.T, replies ...llmtest.Reply) *e2e {
	t.Helper()
	e := &e2e{
		t:    t,
		srv:  llmtest.New(t, replies...),
		work: t.TempDir(),
		data: t.TempDir(),
		home: t.TempDir(),
		id:   uuid.NewString(),
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			e.env = append(e.env, kv)
		}
	}
	e.env = append(e.env,
		"LLM_MODEL=openai/gpt-4o",
		"LLM_API_KEY=sk-e2e-test-key",
		"LLM_BASE_URL="+e.srv.URL+"/v1",
		"HOME="+e.home,
		"XDG_DATA_HOME="+e.home,
		"NO_COLOR=1",
	)
	e.config = filepath.Join(t.TempDir(), "llm.json")
	cfg := `{"num_retries": 3, "retry_min_wait": 0.05, "retry_max_wait": 0.2, "retry_multiplier": 0.05, "timeout": 60}`
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// dir is the conversation's directory.
func (e *e2e) dir() string { return filestore.Dir(e.data, e.id) }

// args are the flags every run gets, then extra.
func (e *e2e) args(extra ...string) []string {
	return append([]string{"run", "--workspace", e.work, "--persistence-dir", e.data,
		"--conversation-id", e.id, "--llm-config", e.config}, extra...)
}

// result is a finished process.
type result struct {
	code           int
	stdout, stderr string
}

// proc is a running gohands process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	err    error

	mu    sync.Mutex
	lines []string // stdout lines so far
	cond  chan struct{}
}

// start starts gohands with args.
func (e *e2e) start(args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = e.env
	cmd.Dir = cmpOr(e.cwd, e.work)
	if e.stdin != "" {
		cmd.Stdin = strings.NewReader(e.stdin)
	}
	p := &proc{t: e.t, cmd: cmd, done: make(chan struct{}), cond: make(chan struct{}, 1)}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			select {
			case p.cond <- struct{}{}:
			default:
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to end, at most limit.
func (p *proc) wait(limit time.Duration) result {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("gohands did not end within %s; stderr:\n%s", limit, p.stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		code = ee.ExitCode()
	} else if p.err != nil {
		p.t.Fatal(p.err)
	}
	return result{code: code, stdout: strings.Join(p.snapshot(), "\n"), stderr: p.stderr.String()}
}

func (p *proc) snapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

// waitFile waits until path exists, or fails.
func (p *proc) waitFile(path string, limit time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-p.done:
			p.t.Fatalf("gohands ended before %s appeared: %v\nstderr:\n%s", path, p.err, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("%s did not appear within %s; stderr:\n%s", path, limit, p.stderr.String())
}

// run runs gohands to the end.
func (e *e2e) run(args ...string) result {
	e.t.Helper()
	return e.start(args...).wait(2 * time.Minute)
}

// mustRun runs gohands and fails unless it exits with want.
func (e *e2e) mustRun(want int, args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != want {
		e.t.Fatalf("gohands %s: exit %d, want %d\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), r.code, want, r.stderr, r.stdout)
	}
	return r
}

// events reads the persisted events of the conversation (the process must
// have ended: opening takes the conversation's lock).
func (e *e2e) events() ([]event.Event, [][]byte) {
	e.t.Helper()
	store, err := filestore.Open(e.dir(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer store.Close()
	log, err := conversation.LoadLog(context.Background(), store)
	if err != nil {
		e.t.Fatal(err)
	}
	var evs []event.Event
	var raws [][]byte
	for i := range log.Len() {
		ev, err := log.Event(context.Background(), i)
		if err != nil {
			e.t.Fatal(err)
		}
		raw, err := log.Raw(context.Background(), i)
		if err != nil {
			e.t.Fatal(err)
		}
		evs = append(evs, ev)
		raws = append(raws, raw)
	}
	return evs, raws
}

// status reads the persisted execution status.
func (e *e2e) status() string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir(), filestore.BaseStateFile))
	if err != nil {
		e.t.Fatal(err)
	}
	var bs struct {
		Status string `json:"execution_status"`
	}
	if err := json.Unmarshal(b, &bs); err != nil {
		e.t.Fatal(err)
	}
	return bs.Status
}

func kinds(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		k, _ := event.KindOf(ev)
		out = append(out, k)
	}
	return out
}

// ofKind returns the events of type T.
func ofKind[T event.Event](evs []event.Event) []T {
	var out []T
	for _, ev := range evs {
		if v, ok := ev.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// toolResults returns the tool messages of a Chat Completions request, in
// order: their tool_call_id and content text.
func toolResults(t *testing.T, r llmtest.Request) (ids, texts []string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if m.Role != "tool" {
			continue
		}
		ids = append(ids, m.ToolCallID)
		texts = append(texts, contentText(m.Content))
	}
	return ids, texts
}

// contentText flattens a Chat message content (a string or parts).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// call is a scripted tool call.
func call(id, name string, args any) llmtest.ToolCall {
	s, ok := args.(string)
	if !ok {
		s = llmtest.Args(args)
	}
	return llmtest.ToolCall{ID: id, Name: name, Arguments: s}
}

// finishReply is the model ending the run.
func finishReply(msg string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_finish", "finish", map[string]any{"message": msg})}}
}
