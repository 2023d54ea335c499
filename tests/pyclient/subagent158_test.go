package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/workspace"
)

// subAgentModel is a scripted model for a run in which the agent hands a
// task to a sub-agent: the parent's first request gets a task call whose
// prompt holds subTaskMark, the sub-agent (whose first user message is
// that prompt) finishes with subAnswer, and any request after a tool
// result, or any other request (a title), gets the parent's finish.
func subAgentModel(t *testing.T) *llmtest.Server {
	const finish = "finish"
	return llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		msgs, _ := r.Body["messages"].([]any)
		var first, last map[string]any
		for _, m := range msgs {
			m, _ := m.(map[string]any)
			if m["role"] == "user" && first == nil {
				first = m
			}
			last = m
		}
		firstText, _ := json.Marshal(first)
		tools, _ := r.Body["tools"].([]any)
		switch {
		case first != nil && bytes.Contains(firstText, []byte(subTaskMark)):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: finish, Arguments: `{"message":"` + subAnswer + `"}`}}}, nil
		case first != nil && last["role"] == "user" && len(tools) > 0:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "task",
				Arguments: `{"description":"count the files","prompt":"` + subTaskMark + `: count the files","security_risk":"LOW"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: finish, Arguments: `{"message":"all done"}`}}}, nil
	}, nil)
}

const (
	subTaskMark = "SUBTASK-7"
	subAnswer   = "sub-answer-42"
)

// The Go client on a real reference 1.58.2 server (one for both cases)
// with a sub-agent and with a critic:
//   - `gohands run --server` whose agent hands a task to a sub-agent (the
//     reference's own task tool runs it): the client reads the server's
//     TaskAction and TaskObservation events, shows the sub-agent's answer,
//     and the run ends with the model's finish;
//   - the remote conversation of an agent with a critic: the server
//     accepts the critic, runs it, and the client decodes the verdict it
//     attaches to the finish (critic_result).
func TestGoClientSubAgentCritic158(t *testing.T) {
	t.Parallel()
	bin := gohandsBinary(t)
	m := subAgentModel(t)
	modelURL := strings.TrimRight(m.URL, "/") + "/v1"
	ref := sharedReference158(t)
	t.Run("sub-agent", func(t *testing.T) {
		cmd := exec.Command(bin, "run", "--server", ref.URL, "--session-key", apiKey, "--preset", "default",
			"--workspace", t.TempDir(), "--model", "openai/gpt-4o", "--base-url", modelURL,
			"--api-key", "scripted", "--json", "delegate the counting")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gohands run --server (1.58.2) with a sub-agent: %v\n%s", err, out)
		}
		for _, w := range []string{`"kind": ?"TaskAction"`, `"kind": ?"TaskObservation"`, subAnswer, `all done`} {
			if !regexp.MustCompile(w).Match(out) {
				t.Errorf("the output lacks %q:\n%s", w, out)
			}
		}
	})
	t.Run("critic", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), goClientTimeout)
		defer cancel()
		cfg := llm.DefaultConfig("openai/gpt-4o")
		cfg.BaseURL, cfg.APIKey, cfg.UsageID, cfg.NumRetries = modelURL, secret.New("scripted"), "agent", 0
		a := agent.New(cfg, []tool.Spec{{Name: "terminal"}}, nil)
		a.Critic = json.RawMessage(`{"kind":"PassCritic"}`)
		work := t.TempDir()
		rec := &recorder{}
		c, err := remote.New(ctx, a, &workspace.Remote{Host: ref.URL, APIKey: apiKey, WorkingDir: work}, &remote.Options{OnEvent: rec.onEvent})
		if err != nil {
			t.Fatalf("the 1.58.2 server refuses an agent with a critic: %v", err)
		}
		defer c.Close()
		if err := c.SendMessage(ctx, event.UserMessage("finish when done")); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if !rec.seen(func(e event.Event) bool {
			ae, ok := e.(*event.ActionEvent)
			return ok && ae.ToolName == "finish" && ae.CriticResult != nil && ae.CriticResult.Score == 1
		}) {
			t.Errorf("no finish with the critic's verdict among the events: %v", rec.evs)
		}
	})
}

// The reference 1.58.2's client (testdata/subagent_critic_client.py)
// drives `gohands serve` with an analyzer (LLMSecurityAnalyzer, set with
// ConfirmRisky over its own calls), a critic (PassCritic) and a sub-agent
// (the task tool set): the run finishes without asking for confirmation
// (the task call is LOW risk), the client reads the task call and its
// result holding the sub-agent's answer, the analyzer back from the
// server, and the critic's verdict on the finish.
func TestReference158ClientSubAgentCritic(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	m := subAgentModel(t)
	g := startGohandsServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "subagent_critic_client.py"),
		"--server", g.URL, "--api-key", apiKey, "--model", m.URL, "--workdir", t.TempDir())
	cmd.Env = referenceEnv(t)
	out, err := cmd.CombinedOutput()
	_, line, ok := bytes.Cut(out, []byte("RESULT "))
	if err != nil || !ok {
		t.Fatalf("the 1.58.2 client on gohands: %v\n%s", err, tail(out, 8000))
	}
	var got struct {
		Status   string
		Analyzer string
		Events   []struct {
			Event, Action, Observation, Text, Tool string
			SecurityRisk                           string   `json:"security_risk"`
			CriticScore                            *float64 `json:"critic_score"`
		}
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if got.Status != "finished" || got.Analyzer != "LLMSecurityAnalyzer" {
		t.Errorf("status %q, analyzer %q; want finished, LLMSecurityAnalyzer", got.Status, got.Analyzer)
	}
	var task, result, critic bool
	for _, e := range got.Events {
		switch {
		case e.Action == "TaskAction":
			task = e.SecurityRisk == "LOW"
		case e.Observation == "TaskObservation":
			result = strings.Contains(e.Text, subAnswer)
		case e.Tool == "finish" && e.CriticScore != nil:
			critic = *e.CriticScore == 1
		}
	}
	if !task || !result || !critic {
		t.Errorf("task call (LOW risk) %v, its result with the sub-agent's answer %v, the critic's verdict on the finish %v; events:\n%s", task, result, critic, line)
	}
}
