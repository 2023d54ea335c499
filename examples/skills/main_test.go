package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// The marketplace's two skills and the public skills (a local copy,
// through EXTENSIONS_PATH) are listed and reach the model: the triggered
// skill's text with the message, the others by name.
func TestRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // the fetch cache; no user skills
	public := t.TempDir()
	for name, body := range map[string]string{
		"skills/git-bisect/SKILL.md": "---\nname: git-bisect\ndescription: Find the commit that broke a test (public-3c9)\n---\nUse git bisect run.\n",
		"skills/unlisted/SKILL.md":   "---\nname: unlisted\ndescription: Not in the default marketplace\n---\nx\n",
		"marketplaces/default.json":  `{"name": "default", "owner": {"name": "OpenHands"}, "plugins": [{"name": "git-bisect", "source": "./skills/git-bisect"}]}`,
	} {
		p := filepath.Join(public, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("EXTENSIONS_PATH", public)
	t.Setenv("EXTENSIONS_REPO", "")
	t.Setenv("EXTENSIONS_REF", "")

	srv := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Added: cli: --json flag."}`}}})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	market, err := filepath.Abs("company") // a bare name is no source ("./company" or a full path is)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Marketplace: market, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"marketplace company: changelog, oncall", "public skills: 1 (git-bisect)", "status: finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warnings:\n%s", out.String())
	}
	body := string(srv.LastRequest().RawBody)
	for _, want := range []string{"starting with the package name and a colon", "oncall", "git-bisect"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model's request lacks %q", want)
		}
	}
	if strings.Contains(body, "unlisted") {
		t.Error("a public skill the default marketplace does not list reached the model")
	}
}
