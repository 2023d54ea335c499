package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/security"

	"golang.org/x/sys/unix"
)

var ctx = context.Background()

// open starts a conversation of a in a temporary workspace.
func open(t *testing.T, a *acp.Agent, opts *conversation.LocalOptions) *conversation.LocalConversation {
	t.Helper()
	var o conversation.LocalOptions
	if opts != nil {
		o = *opts
	}
	c, err := conversation.New(ctx, a, t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func events(t *testing.T, c conversation.Conversation) []event.Event {
	t.Helper()
	log := c.State().Events()
	out := make([]event.Event, log.Len())
	for i := range out {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

func ofKind[T event.Event](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if x, ok := e.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// finalMessage is the message of the last FinishAction.
func finalMessage(t *testing.T, c conversation.Conversation) string {
	t.Helper()
	acts := ofKind[*event.ActionEvent](events(t, c))
	for i := len(acts) - 1; i >= 0; i-- {
		if f, ok := acts[i].Action.(*finish.Action); ok {
			return f.Message
		}
	}
	t.Fatal("no FinishAction")
	return ""
}

func send(t *testing.T, c conversation.Conversation, text string) {
	t.Helper()
	if err := c.SendMessage(ctx, event.UserMessage(text)); err != nil {
		t.Fatal(err)
	}
}

func status(c conversation.Conversation) conversation.ExecutionStatus {
	return c.State().Fields().ExecutionStatus
}

// A turn through the fake server: the permission request waits for the
// user under AlwaysConfirm, running again approves it, and the server's
// fs and terminal requests are served in the workspace.
func TestTurnWithConfirmation(t *testing.T) {
	a := acp.New(fakeCommand(t, "ok")...)
	a.MCPConfig = map[string]json.RawMessage{
		"files": json.RawMessage(`{"command": "mcp-files", "args": ["--root", "/w"], "env": {"A": "1"}}`),
		"web":   json.RawMessage(`{"url": "http://127.0.0.1:9/mcp", "transport": "http"}`),
		"off":   json.RawMessage(`{"command": "x", "enabled": false}`),
	}
	msgs := filepath.Join(t.TempDir(), "received.jsonl")
	t.Setenv("GOHANDS_FAKE_LOG", msgs)
	c := open(t, a, &conversation.LocalOptions{ConfirmationPolicy: security.AlwaysConfirm{}})
	send(t, c, "hello")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(c); st != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s, want waiting_for_confirmation", st)
	}
	acts := ofKind[*event.ActionEvent](events(t, c))
	if len(acts) != 1 {
		t.Fatalf("%d actions, want the held permission", len(acts))
	}
	pa, ok := acts[0].Action.(*acp.PermissionAction)
	if !ok || pa.ToolCallID != "call-1" || pa.Title != "Write out.txt" || !slices.Equal(pa.Options, []string{"yes", "no"}) {
		t.Fatalf("held action %#v", acts[0].Action)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(c); st != conversation.StatusFinished {
		t.Fatalf("status %s, want finished", st)
	}
	msg := finalMessage(t, c)
	for _, want := range []string{"echo: hello", "permission yes", "read back: written by fake: hello", "terminal: term-42"} {
		if !strings.Contains(msg, want) {
			t.Errorf("final message %q lacks %q", msg, want)
		}
	}
	evs := events(t, c)
	var calls []string
	for _, e := range ofKind[*event.ACPToolCallEvent](evs) {
		calls = append(calls, e.ToolCallID+":"+e.Status)
	}
	if !slices.Contains(calls, "call-1:pending") || !slices.Contains(calls, "call-1:completed") || slices.Contains(calls, "call-1:in_progress") {
		t.Errorf("tool call events %v: want call-1 pending then completed, no progress frames", calls)
	}
	if !slices.ContainsFunc(calls, func(s string) bool { return strings.HasPrefix(s, "plan-") }) {
		t.Errorf("tool call events %v: no plan", calls)
	}
	obs := ofKind[*event.ObservationEvent](evs)
	if len(obs) != 2 {
		t.Fatalf("%d observations, want the permission's and the finish's", len(obs))
	}
	if po, ok := obs[0].Observation.(*acp.PermissionObservation); !ok || po.OptionID != "yes" {
		t.Errorf("permission observation %#v", obs[0].Observation)
	}
	var finishAct *event.ActionEvent
	for _, a := range ofKind[*event.ActionEvent](evs) {
		if _, ok := a.Action.(*finish.Action); ok {
			finishAct = a
		}
	}
	if finishAct.ReasoningContent != "thinking about it" {
		t.Errorf("reasoning %q", finishAct.ReasoningContent)
	}
	m := c.State().Fields().Stats.UsageToMetrics[acp.SentinelUsageID]
	if m == nil || m.AccumulatedCost != 0.25 || m.AccumulatedTokenUsage == nil || m.AccumulatedTokenUsage.PromptTokens != 120 || m.AccumulatedTokenUsage.ContextWindow != 200000 {
		t.Errorf("metrics %+v", m)
	}
	if got := c.State().Fields().AgentState["acp_session_id"]; got != "s1" {
		t.Errorf("agent_state acp_session_id %v", got)
	}
	checkSchema(t, msgs)
	// The stdio MCP server is passed on; the fake takes no HTTP ones, and
	// the disabled one stays out.
	for _, m := range received(t, msgs) {
		if m.Method == "session/new" && !strings.Contains(string(m.Params), `"mcpServers":[{"args":["--root","/w"],"command":"mcp-files","env":[{"name":"A","value":"1"}],"name":"files"}]`) {
			t.Errorf("session/new %s", m.Params)
		}
	}
}

// The file the server wrote through fs/write_text_file is in the workspace.
func TestFSWritesInWorkspace(t *testing.T) {
	a := acp.New(fakeCommand(t, "ok")...)
	dir := t.TempDir()
	c, err := conversation.New(ctx, a, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, "hi")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	if err != nil || string(b) != "written by fake: hi" {
		t.Fatalf("out.txt: %q, %v", b, err)
	}
}

// Rejecting the held permission denies it; the server does not write.
func TestRejectedPermission(t *testing.T) {
	a := acp.New(fakeCommand(t, "ok")...)
	dir := t.TempDir()
	c, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{ConfirmationPolicy: security.AlwaysConfirm{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, "hi")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RejectPendingActions(ctx, "no thanks"); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := finalMessage(t, c); !strings.Contains(msg, "permission no") {
		t.Errorf("final message %q: want the rejection", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("out.txt exists after a rejection: %v", err)
	}
}

// A second conversation object on the same persisted state loads the
// stored session instead of making a new one, and the history the server
// replays is not taken for the new turn's answer.
func TestResumeLoadsSession(t *testing.T) {
	a := acp.New(fakeCommand(t, "ok")...)
	dir, pdir := t.TempDir(), t.TempDir()
	c, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{Backend: filestore.NewBackend(pdir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	send(t, c, "one")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.Close()
	msgs := filepath.Join(t.TempDir(), "received.jsonl")
	t.Setenv("GOHANDS_FAKE_LOG", msgs)
	c2, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{Backend: filestore.NewBackend(pdir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	send(t, c2, "two")
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	msg := finalMessage(t, c2)
	if !strings.Contains(msg, "echo: two") || strings.Contains(msg, "replayed") {
		t.Errorf("final message %q", msg)
	}
	if n := len(ofKind[*event.SystemPromptEvent](events(t, c2))); n != 1 {
		t.Errorf("%d system prompts", n)
	}
	methods := receivedMethods(t, msgs)
	if !slices.Contains(methods, "session/load") || slices.Contains(methods, "session/new") {
		t.Errorf("methods %v: want session/load, not session/new", methods)
	}
}

// Bad peers: each ends the run with a ConversationErrorEvent of the
// reference's code, and leaves no process behind.
func TestBadPeers(t *testing.T) {
	for _, tc := range []struct {
		mode, code, detail string
	}{
		{"exit", acp.CodeInit, "no credentials"},
		{"silent", acp.CodeStartupTimeout, "acp_startup_timeout"},
		{"garbage", acp.CodeInit, "malformed JSON-RPC"},
		{"auth", acp.CodeAuthRequired, "Authentication required"},
		{"hang", acp.CodePrompt, "no activity"},
		{"missing", acp.CodeSpawn, "no-such-acp-server"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := fakeCommand(t, tc.mode)
			if tc.mode == "missing" {
				cmd = []string{filepath.Join(t.TempDir(), "no-such-acp-server")}
			}
			pids := filepath.Join(t.TempDir(), "pids")
			t.Setenv("GOHANDS_FAKE_PIDS", pids)
			a := acp.New(cmd...)
			// Only the peers that test a deadline get a short one: on a
			// loaded machine a healthy start may take more than a second.
			a.StartupTimeout, a.PromptTimeout = 30, 30
			switch tc.mode {
			case "silent":
				a.StartupTimeout = 1
			case "hang":
				a.PromptTimeout = 1
			}
			c := open(t, a, nil)
			send(t, c, "hello")
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err := c.Run(rctx)
			var re *conversation.RunError
			if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Detail, tc.detail) {
				t.Fatalf("Run: %v; want code %s with %q", err, tc.code, tc.detail)
			}
			errs := ofKind[*event.ConversationErrorEvent](events(t, c))
			if len(errs) != 1 || errs[0].Code != tc.code {
				t.Fatalf("error events %+v", errs)
			}
			c.Close()
			checkGone(t, pids, tc.mode == "silent" || tc.mode == "hang")
		})
	}
}

// Pausing a turn sends session/cancel; a server that ignores it is
// stopped, with what it started.
func TestPauseStopsHungServer(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	t.Setenv("GOHANDS_FAKE_PIDS", pids)
	a := acp.New(fakeCommand(t, "hang")...)
	c := open(t, a, nil)
	send(t, c, "hello")
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for i := 0; ; i++ {
		if _, err := os.Stat(pids); err == nil {
			break
		}
		if i > 3000 {
			t.Fatal("the server never started its turn")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run after pause: %v", err)
	}
	if st := status(c); st != conversation.StatusPaused {
		t.Fatalf("status %s", st)
	}
	checkGone(t, pids, true)
}

// checkGone checks that the processes whose pids the fake server wrote
// are gone (or zombies awaiting a reaper that is not ours).
func checkGone(t *testing.T, pidFile string, want bool) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		if want {
			t.Fatalf("the fake server wrote no pids: %v", err)
		}
		return
	}
	for f := range strings.FieldsSeq(string(b)) {
		pid, _ := strconv.Atoi(f)
		for i := 0; ; i++ {
			if !alive(pid) {
				break
			}
			if i > 500 {
				t.Errorf("process %d outlived the conversation", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func alive(pid int) bool {
	if unix.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func receivedMethods(t *testing.T, file string) []string {
	t.Helper()
	var out []string
	for _, m := range received(t, file) {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

func received(t *testing.T, file string) []rpcMsg {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rpcMsg
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m rpcMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("received %q: %v", sc.Bytes(), err)
		}
		out = append(out, m)
	}
	return out
}

// checkSchema validates every message the client sent the fake server
// against the protocol's JSON schema (testdata/acp-schema-v1.json, from
// @agentclientprotocol/sdk 2.4.0): requests and notifications by method,
// answers to the server's requests by the method they answer.
func checkSchema(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/acp-schema-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	validate := func(def string, data json.RawMessage) error {
		s := &jsonschema.Schema{Schema: root.Schema, Ref: "#/$defs/" + def, Defs: root.Defs}
		rs, err := s.Resolve(nil)
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		return rs.Validate(v)
	}
	requests := map[string]string{
		"initialize": "InitializeRequest", "session/new": "NewSessionRequest", "session/load": "LoadSessionRequest",
		"session/prompt": "PromptRequest", "session/cancel": "CancelNotification", "session/set_mode": "SetSessionModeRequest",
	}
	answers := map[string]string{
		"session/request_permission": "RequestPermissionResponse", "fs/write_text_file": "WriteTextFileResponse",
		"fs/read_text_file": "ReadTextFileResponse", "terminal/create": "CreateTerminalResponse",
		"terminal/wait_for_exit": "WaitForTerminalExitResponse", "terminal/output": "TerminalOutputResponse",
		"terminal/release": "ReleaseTerminalResponse",
	}
	n := 0
	for _, m := range received(t, file) {
		var def string
		var data json.RawMessage
		switch {
		case m.Method != "":
			def, data = requests[m.Method], m.Params
		case m.Answers != "":
			def, data = answers[m.Answers], m.Result
		}
		if def == "" {
			t.Errorf("no schema type for %+v", m)
			continue
		}
		if err := validate(def, data); err != nil {
			t.Errorf("%s %s: %v", def, data, err)
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d messages checked", n)
	}
}

// A huge tool output is cut to the reference's 30,000 characters.
func TestLongOutputTruncated(t *testing.T) {
	c := open(t, acp.New(fakeCommand(t, "ok")...), nil)
	send(t, c, "long")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range ofKind[*event.ACPToolCallEvent](events(t, c)) {
		if e.Status == "completed" && e.ToolCallID == "call-1" {
			var out string
			json.Unmarshal(e.RawOutput, &out)
			if len(out) > 30100 || !strings.Contains(out, "truncated") {
				t.Errorf("raw output of %d bytes", len(out))
			}
			return
		}
	}
	t.Fatal("no completed call")
}
