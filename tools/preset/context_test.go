package preset_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/preset"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The default agent sends the workspace's AGENTS.md, a project skill and a
// user skill to the model.
func TestDefaultAgentLoadsContext(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(work, "AGENTS.md"), "Always run `make lint` before finishing. (agents-md-marker)\n")
	writeFile(t, filepath.Join(work, ".openhands", "skills", "deploy", "SKILL.md"),
		"---\nname: deploy\ndescription: How to deploy this service (project-skill-marker).\n---\nRun ./deploy.sh.\n")
	writeFile(t, filepath.Join(home, ".openhands", "skills", "style", "SKILL.md"),
		"---\nname: style\ndescription: The user's code style (user-skill-marker).\n---\nPrefer short functions.\n")

	cfg := llm.DefaultConfig("openai/gpt-4o")
	a := preset.DefaultAgent(cfg, nil)
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "hello"})
	m, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	a = a.WithOptions(&agent.Options{Model: m})
	ctx := context.Background()
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	var all strings.Builder
	for _, m := range reqs[0].Messages {
		all.WriteString(event.TextOf(m.Content))
	}
	for _, marker := range []string{"agents-md-marker", "project-skill-marker", "user-skill-marker"} {
		if !strings.Contains(all.String(), marker) {
			t.Errorf("the model's request lacks %s", marker)
		}
	}
}

// The default agent has the reference's default condenser, summarising
// with the agent's model under usage id "condenser".
func TestDefaultAgentCondenser(t *testing.T) {
	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	a := preset.DefaultAgent(cfg, nil)
	c, err := condenser.Decode(a.Condenser)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.(*condenser.LLMSummarizing)
	if !ok {
		t.Fatalf("condenser is %T, want *condenser.LLMSummarizing", c)
	}
	if s.MaxSize != 80 || s.KeepFirst != 4 { // the reference's default_condenser
		t.Errorf("max_size %d keep_first %d, want 80 and 4", s.MaxSize, s.KeepFirst)
	}
	if s.LLM.Model != cfg.Model || s.LLM.UsageID != "condenser" {
		t.Errorf("condenser llm %q usage %q", s.LLM.Model, s.LLM.UsageID)
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(a.Condenser, &kind); err != nil || kind.Kind != "LLMSummarizingCondenser" {
		t.Errorf("condenser kind %q (%v)", kind.Kind, err)
	}
}
