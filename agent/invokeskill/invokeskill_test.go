package invokeskill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/agent/invokeskill"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
)

type recording struct {
	Parameters    map[string]any             `json:"parameters"`
	Definition    map[string]any             `json:"definition"`
	Action        string                     `json:"action"`
	Render        [][2]string                `json:"render"`
	Invoke        map[string]json.RawMessage `json:"invoke"`
	InvokedSkills []string                   `json:"invoked_skills"`
}

func load(t *testing.T) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Skill content renders as the reference renders it
// (testdata/gen_reference.py): commands run, code left alone.
func TestRenderLikeReference(t *testing.T) {
	rec := load(t)
	if len(rec.Render) < 8 {
		t.Fatalf("%d cases", len(rec.Render))
	}
	dir := t.TempDir()
	for _, c := range rec.Render {
		if got := invokeskill.Render(context.Background(), c[0], dir, 10*time.Second); got != c[1] {
			t.Errorf("Render(%q)\n got %q\nwant %q", c[0], got, c[1])
		}
	}
	if got := invokeskill.Render(context.Background(), "!`pwd`", dir, 10*time.Second); got != dir {
		t.Errorf("commands run in %q, want %q", got, dir)
	}
	if got := invokeskill.Render(context.Background(), "!`sleep 5`", dir, 50*time.Millisecond); !strings.Contains(got, "timed out after 0.05s") {
		t.Errorf("slow command: %q", got)
	}
}

// Loading a skill answers as the reference does, errors included.
func TestInvokeLikeReference(t *testing.T) {
	rec := load(t)
	ws := t.TempDir()
	src := filepath.Join(ws, ".agents", "skills", "deploy", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("---\nname: deploy\ndescription: d\n---\nRun ./deploy.sh in !`pwd`.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var invoked []string
	tl := invokeskill.New(&invokeskill.Options{
		Skills: []skill.Skill{
			{Name: "deploy", Content: "Run ./deploy.sh in !`pwd`.", Source: src, IsAgentSkillsFormat: true, Description: "d"},
			{Name: "hidden", Content: "x", IsAgentSkillsFormat: true, DisableModelInvocation: true, Description: "h"},
		},
		WorkingDir: ws,
		OnInvoke:   func(n string) { invoked = append(invoked, n) },
	})
	for name, want := range rec.Invoke {
		obs, err := tl.Run(context.Background(), &invokeskill.Action{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		got, err := event.MarshalKinded(obs)
		if err != nil {
			t.Fatal(err)
		}
		got = bytes.ReplaceAll(got, []byte(ws), []byte("$DIR"))
		var g, w any
		json.Unmarshal(got, &g)
		json.Unmarshal(want, &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%q (-reference +gohands):\n%s", name, diff)
		}
	}
	slices.Sort(invoked)
	if !slices.Equal(slices.Compact(invoked), rec.InvokedSkills) {
		t.Errorf("invoked %v, want %v", invoked, rec.InvokedSkills)
	}
}

func TestWire(t *testing.T) {
	rec := load(t)
	tl := invokeskill.New(nil)
	got, _ := event.MarshalJSON(tool.Parameters(tl))
	var g map[string]any
	json.Unmarshal(got, &g)
	delete(g["properties"].(map[string]any)["summary"].(map[string]any), "description")
	delete(g["properties"].(map[string]any)["name"].(map[string]any), "description")
	if diff := cmp.Diff(rec.Parameters, g); diff != "" {
		t.Errorf("parameters (-reference +gohands):\n%s", diff)
	}
	def, _ := event.MarshalJSON(tl.Definition())
	var d map[string]any
	json.Unmarshal(def, &d)
	delete(d, "description")
	delete(rec.Definition, "meta")
	if diff := cmp.Diff(rec.Definition, d); diff != "" {
		t.Errorf("definition (-reference +gohands):\n%s", diff)
	}
	a, _ := event.MarshalKinded(&invokeskill.Action{Name: "deploy"})
	if string(a) != rec.Action {
		t.Errorf("action %s, want %s", a, rec.Action)
	}
	tooltest.Goldens(t, tl)
}

// An agent whose context has an invocable skill offers invoke_skill, the
// model loads the skill with it, and the conversation records it; an
// agent without such skills does not offer the tool.
func TestAgentAttachesInvokeSkill(t *testing.T) {
	ws := t.TempDir()
	ac, err := json.Marshal(&skill.AgentContext{Skills: []skill.Skill{
		{Name: "deploy", Content: "Deploy with ./deploy.sh.", IsAgentSkillsFormat: true, Description: "How to deploy."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := llmtest.NewProvider(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "invoke_skill", Arguments: `{"name":"deploy"}`}}},
		llmtest.Reply{Text: "done"},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, nil, &agent.Options{Model: l})
	a.AgentContext = ac
	c, err := conversation.New(context.Background(), a, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(context.Background(), event.UserMessage("deploy it")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	var names []string
	for _, s := range reqs[0].Tools {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "invoke_skill") {
		t.Fatalf("tools %v lack invoke_skill", names)
	}
	if !strings.Contains(event.TextOf(reqs[0].Messages[0].Content), "invoke_skill(name=...)") {
		t.Error("the system prompt does not mention invoke_skill")
	}
	var result string
	for _, m := range reqs[1].Messages {
		if m.Role == event.RoleTool {
			result = event.TextOf(m.Content)
		}
	}
	if result != "Deploy with ./deploy.sh." {
		t.Errorf("the model got %q", result)
	}
	if got := c.State().Fields().InvokedSkills; !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("invoked_skills %v", got)
	}

	// Without invocable skills there is no tool.
	p2 := llmtest.NewProvider(t, llmtest.Reply{Text: "hi"})
	l2, _ := llm.New(cfg, &llm.Options{Provider: p2})
	b := agent.New(cfg, nil, &agent.Options{Model: l2})
	c2, err := conversation.New(context.Background(), b, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SendMessage(context.Background(), event.UserMessage("hi"))
	if err := c2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range p2.Requests()[0].Tools {
		if s.Name == "invoke_skill" {
			t.Error("invoke_skill offered without skills")
		}
	}
}
