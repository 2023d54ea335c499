package acp_test

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The test binary doubles as a scripted ACP server: with GOHANDS_FAKE_ACP
// set, TestMain runs fakeServer instead of the tests. The modes are the
// good peer ("ok") and the bad ones.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GOHANDS_FAKE_ACP"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeCommand is the acp_command running the fake server in mode.
func fakeCommand(t *testing.T, mode string) []string {
	t.Helper()
	t.Setenv("GOHANDS_FAKE_ACP", mode)
	return []string{fakeBinary(t), "-test.run=^$"}
}

// fakeBinary is the test binary, which is the fake server too.
func fakeBinary(tb testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int            `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	// Answers, in the fake's log only, is the method of the fake's
	// request this is the answer to.
	Answers string `json:"answers,omitempty"`
}

// record appends what the client sent to $GOHANDS_FAKE_LOG.
func record(m rpcMsg) {
	p := os.Getenv("GOHANDS_FAKE_LOG")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(m)
	f.Write(append(b, '\n'))
}

type fake struct {
	mu      sync.Mutex
	out     io.Writer
	next    int
	waiting map[int]chan rpcMsg
	cancel  chan struct{}
}

func (f *fake) send(v any) {
	b, _ := json.Marshal(v)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(append(b, '\n'))
}

func (f *fake) reply(id *int, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": *id, "result": result})
}

func (f *fake) fail(id *int, code int, msg string) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": *id, "error": map[string]any{"code": code, "message": msg}})
}

func (f *fake) notify(method string, params any) {
	f.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// request calls the client and waits for its answer.
func (f *fake) request(method string, params any) rpcMsg {
	f.mu.Lock()
	f.next++
	id := 1000 + f.next
	ch := make(chan rpcMsg, 1)
	f.waiting[id] = ch
	f.mu.Unlock()
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m := <-ch
	m.Answers = method
	record(m)
	return m
}

func (f *fake) update(session string, u map[string]any) {
	f.notify("session/update", map[string]any{"sessionId": session, "update": u})
}

// grandchild starts a long sleep in the server's process group and
// records its pid, so tests can check that nothing outlives the server.
func grandchild() {
	cmd := exec.Command("sleep", "300")
	if cmd.Start() == nil {
		if p := os.Getenv("GOHANDS_FAKE_PIDS"); p != "" {
			os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+" "+strconv.Itoa(cmd.Process.Pid)), 0o644)
		}
	}
}

func fakeServer(mode string) {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fake: cannot start: no credentials")
		os.Exit(3)
	case "silent":
		grandchild()
		io.Copy(io.Discard, os.Stdin)
		select {}
	}
	f := &fake{out: os.Stdout, waiting: map[int]chan rpcMsg{}, cancel: make(chan struct{}, 1)}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Method != "" {
			record(m)
		}
		if m.Method == "" && m.ID != nil {
			f.mu.Lock()
			ch := f.waiting[*m.ID]
			f.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if mode == "garbage" {
			fmt.Fprintln(os.Stdout, "starting up...") // a log line: ignored
			fmt.Fprintln(os.Stdout, `{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1,`)
			select {}
		}
		switch m.Method {
		case "initialize":
			f.reply(m.ID, map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}, "authMethods": []any{}, "agentInfo": map[string]any{"name": cmp.Or(os.Getenv("GOHANDS_FAKE_NAME"), "fake-acp"), "version": "1.0"}})
		case "session/new":
			if mode == "auth" {
				f.fail(m.ID, -32000, "Authentication required")
				continue
			}
			res := map[string]any{"sessionId": "s1"}
			switch mode {
			case "models": // the session's model state
				res["models"] = map[string]any{"currentModelId": "m-fast", "availableModels": []any{
					map[string]any{"modelId": "m-fast", "name": "Fast"},
					map[string]any{"modelId": "m-big", "name": "Big", "description": "The big one"},
				}}
			case "options": // a model selector among the config options
				res["configOptions"] = []any{map[string]any{"type": "select", "id": "model", "name": "Model", "currentValue": "m-big", "options": []any{
					map[string]any{"value": "m-fast", "name": "Fast"},
					map[string]any{"value": "m-big", "name": "Big"},
				}}}
			}
			f.reply(m.ID, res)
		case "session/load":
			var p struct {
				SessionID string `json:"sessionId"`
			}
			json.Unmarshal(m.Params, &p)
			if p.SessionID != "s1" {
				f.fail(m.ID, -32002, "Resource not found")
				continue
			}
			f.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "(replayed history)"}})
			f.reply(m.ID, map[string]any{})
		case "session/set_mode":
			f.reply(m.ID, map[string]any{})
		case "session/set_model", "session/set_config_option":
			// Models m-fast and m-big exist; m-slow is never answered.
			var p struct {
				ModelID string `json:"modelId"`
				Value   string `json:"value"`
			}
			json.Unmarshal(m.Params, &p)
			switch p.ModelID + p.Value {
			case "m-fast", "m-big":
				if m.Method == "session/set_config_option" {
					f.reply(m.ID, map[string]any{"configOptions": []any{}})
				} else {
					f.reply(m.ID, map[string]any{})
				}
			case "m-slow":
			default:
				f.fail(m.ID, -32602, "Invalid params: unknown model "+p.ModelID+p.Value)
			}
		case "session/cancel":
			select {
			case f.cancel <- struct{}{}:
			default:
			}
		case "session/prompt":
			go f.prompt(mode, m)
		default:
			if m.ID != nil {
				f.fail(m.ID, -32601, "Method not found")
			}
		}
	}
}

// prompt plays one turn: a thought, a tool call that writes through the
// client's fs, a permission request, a terminal command, a plan, the
// answer and usage. In mode "hang" it stops answering after one chunk.
func (f *fake) prompt(mode string, m rpcMsg) {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	json.Unmarshal(m.Params, &p)
	s := p.SessionID
	var text strings.Builder
	for _, b := range p.Prompt {
		text.WriteString(b.Text)
	}
	f.update(s, map[string]any{"sessionUpdate": "agent_thought_chunk", "content": map[string]any{"type": "text", "text": "thinking about it"}})
	if mode == "hang" {
		grandchild()
		select {}
	}
	cwd, _ := os.Getwd()
	target := filepath.Join(cwd, "out.txt")
	f.update(s, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Write out.txt", "kind": "edit", "status": "pending", "rawInput": map[string]any{"path": target}})
	perm := f.request("session/request_permission", map[string]any{
		"sessionId": s,
		"toolCall":  map[string]any{"toolCallId": "call-1", "title": "Write out.txt", "kind": "edit", "rawInput": map[string]any{"path": target}},
		"options": []any{
			map[string]any{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
			map[string]any{"optionId": "no", "name": "Reject", "kind": "reject_once"},
		},
	})
	var outcome struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	json.Unmarshal(perm.Result, &outcome)
	if outcome.Outcome.Outcome == "cancelled" {
		<-f.cancel
		f.reply(m.ID, map[string]any{"stopReason": "cancelled"})
		return
	}
	answer := "permission " + outcome.Outcome.OptionID
	if outcome.Outcome.OptionID == "yes" {
		w := f.request("fs/write_text_file", map[string]any{"sessionId": s, "path": target, "content": "written by fake: " + text.String()})
		if w.Error != nil {
			answer += "; write failed: " + string(w.Error)
		}
		r := f.request("fs/read_text_file", map[string]any{"sessionId": s, "path": target})
		var rr struct {
			Content string `json:"content"`
		}
		json.Unmarshal(r.Result, &rr)
		answer += "; read back: " + rr.Content
		f.update(s, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress"})
		output := "ok"
		if text.String() == "long" {
			output = strings.Repeat("x", 100000)
		}
		f.update(s, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed", "rawOutput": output})
	} else {
		f.update(s, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed"})
	}
	term := f.request("terminal/create", map[string]any{"sessionId": s, "command": "echo term-$((6*7))"})
	var tr struct {
		TerminalID string `json:"terminalId"`
	}
	json.Unmarshal(term.Result, &tr)
	f.request("terminal/wait_for_exit", map[string]any{"sessionId": s, "terminalId": tr.TerminalID})
	out := f.request("terminal/output", map[string]any{"sessionId": s, "terminalId": tr.TerminalID})
	var to struct {
		Output string `json:"output"`
	}
	json.Unmarshal(out.Result, &to)
	f.request("terminal/release", map[string]any{"sessionId": s, "terminalId": tr.TerminalID})
	answer += "; terminal: " + to.Output
	f.update(s, map[string]any{"sessionUpdate": "plan", "entries": []any{map[string]any{"content": "write the file", "priority": "high", "status": "completed"}}})
	f.update(s, map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "echo: " + text.String() + "; "}})
	f.update(s, map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": answer}})
	f.update(s, map[string]any{"sessionUpdate": "usage_update", "used": 100, "size": 200000, "cost": map[string]any{"amount": 0.25, "currency": "USD"}})
	f.reply(m.ID, map[string]any{"stopReason": "end_turn", "usage": map[string]any{"inputTokens": 120, "outputTokens": 30, "totalTokens": 150}})
}
