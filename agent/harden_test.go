package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"

	"golang.org/x/sys/unix"
)

// TestModelKeyMasked: the model's key and an MCP server's header are
// masked in what a command prints, although they are no named secrets.
func TestModelKeyMasked(t *testing.T) {
	const key = "sk-model-key-5f4e3d2c1b0a"
	const header = "Bearer mcp-header-token-77aa"
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"cat creds.txt"}`}}},
		llmtest.Reply{Text: "done"},
	)
	a.LLM.APIKey = secret.New(key)
	a.MCPConfig = map[string]json.RawMessage{"mcpServers": json.RawMessage(`{"x":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"` + header + `"},"enabled":false}}`)}
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	if err := os.WriteFile(filepath.Join(c.WorkingDir(), "creds.txt"), []byte(key+"\n"+header+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("show the creds"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	b, _ := json.Marshal(reqs[1].Messages)
	for _, e := range logEvents(t, c) {
		eb, _ := event.Marshal(e)
		b = append(b, eb...)
	}
	if strings.Contains(string(b), key) || strings.Contains(string(b), "mcp-header-token-77aa") {
		t.Errorf("a credential reached the model or the log:\n%s", b)
	}
	if !strings.Contains(string(b), secret.Hidden) {
		t.Errorf("no masked output:\n%s", b)
	}
}

// validHistory checks what every provider requires of a history: each
// assistant message's tool calls are answered at once, one tool message
// each, and no tool-call id is used twice.
func validHistory(t *testing.T, label string, msgs []event.Message) {
	t.Helper()
	seen := map[string]bool{}
	for i, m := range msgs {
		if m.Role == event.RoleTool && (i == 0 || !seen[m.ToolCallID]) {
			t.Errorf("%s: message %d answers call %q that no earlier message made", label, i, m.ToolCallID)
		}
		if m.Role != event.RoleAssistant {
			continue
		}
		for k, tc := range m.ToolCalls {
			if seen[tc.ID] {
				t.Errorf("%s: tool-call id %q used twice", label, tc.ID)
			}
			seen[tc.ID] = true
			if i+1+k >= len(msgs) || msgs[i+1+k].Role != event.RoleTool {
				t.Errorf("%s: call %q of message %d is not answered at once: %s", label, tc.ID, i, roles(msgs))
				return
			}
		}
	}
}

func roles(msgs []event.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role))
		if m.ToolCallID != "" {
			b.WriteString("(" + m.ToolCallID + ")")
		}
		for _, tc := range m.ToolCalls {
			b.WriteString("[" + tc.ID + "]")
		}
		b.WriteString(" ")
	}
	return b.String()
}

// TestReusedToolCallIDs: a model that gives the same id to calls of two
// replies, or two calls of one reply, gets a valid history, live and
// after a resume.
func TestReusedToolCallIDs(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	echo := func(s string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: "call_1", Name: "terminal", Arguments: `{"command":"echo ` + s + `"}`}
	}
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{echo("one")}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{echo("two"), echo("three")}},
		llmtest.Reply{Text: "done"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("echo"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.Close()
	b, p2 := newAgent(t, llmtest.Reply{Text: "again"})
	b.Tools = append(b.Tools, tool.Spec{Name: terminal.Name})
	c2, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if br, err := c2.State().ActiveBranch(); err != nil || len(conversation.UnmatchedActions(br)) != 0 {
		t.Errorf("actions unanswered after the resume: %v", err)
	}
	c2.SendMessage(ctx, event.UserMessage("more"))
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := append(p.Requests(), p2.Requests()...)
	for i, r := range reqs {
		validHistory(t, fmt.Sprintf("request %d", i), r.Messages)
	}
	last := reqs[len(reqs)-1].Messages
	if n := strings.Count(roles(last), "tool("); n != 3 {
		t.Errorf("%d tool results in the last request, want 3: %s", n, roles(last))
	}
}

// TestMessageWhileWaitingForConfirmation: a user message sent while
// actions wait for confirmation does not come between the calls and
// their results in what the model is sent.
func TestMessageWhileWaitingForConfirmation(t *testing.T) {
	for _, approve := range []bool{true, false} {
		a, p := newAgent(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"echo hi"}`}}},
			llmtest.Reply{Text: "ok"},
		)
		a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
		c, _ := newConv(t, a, &conversation.LocalOptions{ConfirmationPolicy: &security.AlwaysConfirm{}})
		c.SendMessage(ctx, event.UserMessage("echo"))
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if c.Status() != conversation.StatusWaitingForConfirmation {
			t.Fatalf("status %s", c.Status())
		}
		c.SendMessage(ctx, event.UserMessage("and also say hello"))
		if !approve {
			if err := c.RejectPendingActions(ctx, "no"); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		reqs := p.Requests()
		if len(reqs) != 2 {
			t.Fatalf("approve=%v: %d requests", approve, len(reqs))
		}
		validHistory(t, fmt.Sprintf("approve=%v", approve), reqs[1].Messages)
		if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != event.RoleUser {
			t.Errorf("approve=%v: the user's message is not last: %s", approve, roles(reqs[1].Messages))
		}
	}
}

// failingStore fails the append of observations while fail is set, as a
// full or read-only disk would.
type failingStore struct {
	conversation.Store
	fail *atomic.Bool
}

func (s failingStore) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	if _, ok := e.(*event.ObservationEvent); ok && s.fail.Load() {
		return conversation.Entry{}, fmt.Errorf("writing the event: %w", unix.ENOSPC)
	}
	return s.Store.Append(ctx, ent, e)
}

type failingBackend struct {
	*filestore.Backend
	fail *atomic.Bool
}

func (b failingBackend) Open(ctx context.Context, id string) (conversation.Store, error) {
	s, err := b.Backend.Open(ctx, id)
	return failingStore{s, b.fail}, err
}

// TestActionNotRerunAfterWriteFailure: an action whose observation could
// not be stored is answered, on resume, as the crash path answers it: it
// does not run a second time.
func TestActionNotRerunAfterWriteFailure(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	a, _ := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"echo ran >> log.txt"}`}}})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	fail := &atomic.Bool{}
	fail.Store(true)
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: failingBackend{filestore.NewBackend(dir, nil), fail}})
	if err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("log"))
	if err := c.Run(ctx); err == nil || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Run with a failing store: %v", err)
	}
	id := c.ID()
	c.Close()

	b, p := newAgent(t, llmtest.Reply{Text: "done"})
	b.Tools = append(b.Tools, tool.Spec{Name: terminal.Name})
	c2, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(got) != "ran\n" {
		t.Errorf("log.txt = %q: the action ran again", got)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	validHistory(t, "after resume", reqs[0].Messages)
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != event.RoleTool || !strings.Contains(event.TextOf(last.Content), "interrupted") {
		t.Errorf("the model was not told: %+v", last)
	}
}

// fullStore fails every write (appends and the base state) with ENOSPC
// while full is set, as a full disk does.
type fullStore struct {
	conversation.Store
	full *atomic.Bool
}

func (s fullStore) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	if s.full.Load() {
		return conversation.Entry{}, fmt.Errorf("writing the event: %w", unix.ENOSPC)
	}
	return s.Store.Append(ctx, ent, e)
}

func (s fullStore) WriteBase(ctx context.Context, data []byte) error {
	if s.full.Load() {
		return fmt.Errorf("writing the base state: %w", unix.ENOSPC)
	}
	return s.Store.WriteBase(ctx, data)
}

// TestDiskFullMidRun: a disk that fills up while an action runs ends the
// run in error (not "running"), the error event reaches subscribers at
// once and the log once the disk has room, and the next run answers the
// action whose outcome was lost instead of running it again, then goes on
// (issue 35 item 4).
func TestDiskFullMidRun(t *testing.T) {
	work := t.TempDir()
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"echo ran >> log.txt"}`}}},
		llmtest.Reply{Text: "done"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	full := &atomic.Bool{}
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
		Store: fullStore{conversation.NewMemoryStore(), full},
		// The disk fills up once the action is stored, before its result.
		OnEvent: func(e event.Event) {
			if _, ok := e.(*event.ActionEvent); ok {
				full.Store(true)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	live := c.Watch(ctx)
	defer live.Close()
	c.SendMessage(ctx, event.UserMessage("log"))
	if err := c.Run(ctx); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Run on a full disk: %v", err)
	}
	if st := c.Status(); st != conversation.StatusError {
		t.Fatalf("status %s after the disk filled up", st)
	}
	lost := c.Unrecorded()
	if lost == nil || lost.Code != "OSError" {
		t.Fatalf("unrecorded error event: %+v", lost)
	}
	seen := false
	for e := range live.All() {
		if seen = e.EventBase().ID == lost.ID; seen {
			break
		}
	}
	if !seen {
		t.Fatalf("subscribers did not get the error event: %v", live.Err())
	}

	full.Store(false)
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run once the disk has room: %v", err)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Fatalf("status %s", st)
	}
	if got, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(got) != "ran\n" {
		t.Errorf("log.txt = %q: the action ran again", got)
	}
	var kinds []string
	for _, e := range logEvents(t, c) {
		k, _ := event.KindOf(e)
		kinds = append(kinds, k)
	}
	want := "ActionEvent ConversationErrorEvent AgentErrorEvent"
	if !strings.Contains(strings.Join(kinds, " "), want) {
		t.Errorf("log %v: want %s", kinds, want)
	}
	if reqs := p.Requests(); len(reqs) != 2 {
		t.Errorf("%d model calls", len(reqs))
	} else {
		validHistory(t, "after the disk had room", reqs[1].Messages)
	}
}

// TestNoModelCallWithoutUserMessage: a conversation that holds no user
// message (its task was never stored) does not call the model.
func TestNoModelCallWithoutUserMessage(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "hello?"})
	c, _ := newConv(t, a, nil)
	if err := c.Run(ctx); !errors.Is(err, agent.ErrNoUserMessage) {
		t.Fatalf("Run without a user message: %v", err)
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	c.SendMessage(ctx, event.UserMessage("the task"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Errorf("%d model calls after the task", n)
	}
}

// TestOversizedArguments: a tool call with arguments past the limit is
// answered with an error, and the stored event does not keep them.
func TestOversizedArguments(t *testing.T) {
	big := strings.Repeat("y", agent.MaxToolArgumentBytes+1)
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"echo ` + big + `"}`}}},
		llmtest.Reply{Text: "ok"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range logEvents(t, c) {
		b, _ := event.Marshal(e)
		total += len(b)
	}
	if total > 64<<10 {
		t.Errorf("the log holds %d bytes", total)
	}
	reqs := p.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].Messages)
	if len(b) > 64<<10 || !strings.Contains(string(b), "more than the limit") {
		t.Errorf("the model was sent %d bytes: %.300s", len(b), b)
	}
}

// orderStore records, over a file store, whether the user's message was
// stored before the first base-state write, and fails base-state writes
// while failBase is set, as a process killed before writing it would.
type orderStore struct {
	*filestore.Store
	failBase      bool
	messageStored bool
	baseFirst     bool // a base state was written before the message
}

func (s *orderStore) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	ent, err := s.Store.Append(ctx, ent, e)
	if err == nil && ent.Kind == event.KindMessage && ent.Source == event.SourceUser {
		s.messageStored = true
	}
	return ent, err
}

func (s *orderStore) WriteBase(ctx context.Context, b []byte) error {
	if !s.messageStored {
		s.baseFirst = true
	}
	if s.failBase {
		return errors.New("killed")
	}
	return s.Store.WriteBase(ctx, b)
}

// TestFirstMessageStoredWithCreation: a new conversation's base state is
// written only after its first message is stored, so no kill leaves a
// conversation without its task; a creation stopped before the base state
// is taken up by the next New with the id, its message sent once (issue 17
// item 8).
func TestFirstMessageStoredWithCreation(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "done"})
	base := t.TempDir()
	id := "6f1c1f0e-8d7a-4c55-9a3e-0b2c4d6e8f10"
	task := event.UserMessage("the task")
	fs, err := filestore.Open(filestore.Dir(base, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &orderStore{Store: fs, failBase: true}
	if _, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{ID: id, Store: st, FirstMessage: &task}); err == nil {
		t.Fatal("New succeeded although the base state could not be written")
	}
	if st.baseFirst || !st.messageStored {
		t.Fatalf("base state written before the message: %v, message stored: %v", st.baseFirst, st.messageStored)
	}
	if _, err := os.Stat(filepath.Join(filestore.Dir(base, id), filestore.BaseStateFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("base state after the failed creation: %v", err)
	}

	c, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{ID: id, Backend: filestore.NewBackend(base, nil), FirstMessage: &task})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, e := range logEvents(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceUser {
			users++
		}
	}
	reqs := p.Requests()
	if users != 1 || len(reqs) != 1 {
		t.Fatalf("%d user messages in the log, %d model calls; want 1 and 1", users, len(reqs))
	}
	if b, _ := json.Marshal(reqs[0].Messages); !strings.Contains(string(b), "the task") {
		t.Errorf("the model was not given the task: %s", b)
	}
	if got := c.State().Fields().LastUserMessageID; got == "" {
		t.Error("LastUserMessageID not taken up from the log")
	}
}

// TestHookEnvHidesCredentials: a command hook inherits the process's
// environment without the variables holding the model's key, a secret or
// the agent server's own keys, and its output is masked in the log (issue
// 17 item 1).
func TestHookEnvHidesCredentials(t *testing.T) {
	const key = "sk-hook-model-key-3c2b1a09"
	const tok = "tok-hook-secret-8d7e6f5a"
	const sess = "sess-hook-key-1b2c3d4e"
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GOHANDS_TEST_MODEL_KEY", key)
	t.Setenv("GOHANDS_TEST_TOKEN", tok)
	t.Setenv("SESSION_API_KEY", sess)
	t.Setenv("GOHANDS_TEST_PLAIN", "plain-value")
	work := t.TempDir()
	a, _ := newAgent(t, llmtest.Reply{Text: "done"})
	a.LLM.APIKey = secret.New(key)
	if err := os.WriteFile(filepath.Join(work, "tok.txt"), []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := `{"UserPromptSubmit":[{"hooks":[{"command":"env > hookenv.txt; cat tok.txt"}]}]}`
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
		HookConfig: json.RawMessage(cfg),
		Secrets:    map[string]secret.Source{"API_TOKEN": &secret.StaticSecret{Value: secret.New(tok)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(work, "hookenv.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "GOHANDS_TEST_PLAIN=plain-value") {
		t.Fatalf("the hook did not get the environment:\n%s", env)
	}
	for _, v := range []string{key, tok, sess} {
		if strings.Contains(string(env), v) {
			t.Errorf("the hook's environment holds %q", v)
		}
	}
	b, _ := json.Marshal(logEvents(t, c))
	if !strings.Contains(string(b), "hookenv.txt") {
		t.Fatalf("no hook run in the log: %.2000s", b)
	}
	if strings.Contains(string(b), tok) {
		t.Errorf("the hook's output reached the log unmasked: %.2000s", b)
	}
}

// TestResumeRebuiltBaseState: a conversation whose base state was lost
// with no copy is rebuilt from its events (filestore.Repair) and resumes
// with the agent it is given; the model sees the whole history (issue 17
// item 6).
func TestResumeRebuiltBaseState(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "second answer"})
	base, work := t.TempDir(), t.TempDir()
	task := event.UserMessage("the first task")
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(base, nil), FirstMessage: &task})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	dir := filestore.Dir(base, id)
	os.WriteFile(filepath.Join(dir, filestore.BaseStateFile), []byte("{\"id\": \"cut"), 0o644)
	os.Remove(filepath.Join(dir, filestore.PrevBaseStateFile))
	if _, err := conversation.New(ctx, a, work, &conversation.LocalOptions{ID: id, Backend: filestore.NewBackend(base, nil)}); err == nil {
		t.Fatal("a damaged base state opened")
	}
	r, err := filestore.Repair(dir)
	if err != nil || !r.Rebuilt {
		t.Fatalf("Repair: %v %+v", err, r)
	}
	if _, err := conversation.New(ctx, nil, work, &conversation.LocalOptions{ID: id, Backend: filestore.NewBackend(base, nil)}); !errors.Is(err, conversation.ErrNoAgent) {
		t.Fatalf("resume without an agent of a state rebuilt without one: %v", err)
	}
	c, err = conversation.New(ctx, a, work, &conversation.LocalOptions{ID: id, Backend: filestore.NewBackend(base, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("the second task")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].Messages)
	for _, want := range []string{"the first task", "first answer", "the second task"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the model was not sent %q: %.1500s", want, b)
		}
	}
}

// TestLargeArgumentsStoredOnce: a call with large arguments (under the
// limit) is stored with them once, in the action, and reads back with the
// same arguments, which the model is sent (issue 17 item 10).
func TestLargeArgumentsStoredOnce(t *testing.T) {
	big := strings.Repeat("y", 300<<10)
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"security_risk": "LOW", "command": "echo ` + big + ` | wc -c"}`}}},
		llmtest.Reply{Text: "ok"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	base := t.TempDir()
	task := event.UserMessage("go")
	c, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(base, nil), FirstMessage: &task})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var live *event.ActionEvent
	for _, e := range logEvents(t, c) {
		if ae, ok := e.(*event.ActionEvent); ok {
			live = ae
		}
	}
	if live == nil || live.Action == nil {
		t.Fatalf("no action: %+v", live)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(live.ToolCall.Arguments), &args); err != nil || args["command"] != "echo "+big+" | wc -c" {
		t.Fatalf("arguments read back: %v, %.200s", err, live.ToolCall.Arguments)
	}
	reqs := p.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].Messages)
	if !strings.Contains(string(b), big) || !strings.Contains(string(b), "307201") {
		t.Errorf("the model was not sent the call and its result")
	}
	// On disk: the event file holds the argument once.
	dir := filestore.Dir(base, c.ID())
	files, _ := filepath.Glob(filepath.Join(dir, filestore.EventsDir, "event-*.json"))
	total := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		total += len(data)
		if n := strings.Count(string(data), big); n > 1 {
			t.Errorf("%s holds the argument %d times", filepath.Base(f), n)
		}
	}
	if total > len(big)*3/2 {
		t.Errorf("the events take %d bytes for a %d byte argument", total, len(big))
	}
	// Reopened, the event reads back the same.
	c.Close()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	st, err := conversation.LoadLog(ctx, fs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Len() {
		e, err := st.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if ae, ok := e.(*event.ActionEvent); ok && ae.ToolCall.Arguments != live.ToolCall.Arguments {
			t.Errorf("arguments after reopening differ: %.200s", ae.ToolCall.Arguments)
		}
	}
}
