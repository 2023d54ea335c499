package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/skill"
)

// gohands run --memory: the user's and the workspace's memory indexes
// reach the model's first request, under their headers, with the
// instruction to keep them; without the flag neither does.
func TestE2EMemoryFlag(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("noted"), finishReply("noted"))
	e.env = append(e.env, "OH_PERSISTENCE_DIR=")
	for path, text := range map[string]string{
		filepath.Join(e.home, ".openhands", "memory", "MEMORY.md"): "- user fact: prefers tabs\n",
		filepath.Join(e.work, skill.MemoryIndex):                   "- project fact: run make check before pushing\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wants := []string{
		"# User memory (~/.openhands/memory/MEMORY.md)", "- user fact: prefers tabs",
		"# Project memory (.openhands/memory/MEMORY.md)", "- project fact: run make check before pushing",
		"MEMORY.md is a short index of lasting facts",
	}
	e.mustRun(0, e.args("--memory", "remember this")...)
	sys := systemText(t, e.srv.Requests()[0])
	for _, want := range wants {
		if !strings.Contains(sys, want) {
			t.Errorf("the model's system message lacks %q:\n%s", want, sys)
		}
	}

	// A new conversation, without the flag.
	e.mustRun(0, "run", "--workspace", e.work, "--persistence-dir", e.data, "--llm-config", e.config, "forget it")
	sys = systemText(t, e.srv.Requests()[1])
	for _, want := range wants {
		if strings.Contains(sys, want) {
			t.Errorf("without --memory the model's system message has %q", want)
		}
	}
}

// systemText returns the text of a Chat Completions request's system
// messages.
func systemText(t *testing.T, r llmtest.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range body.Messages {
		if m.Role == "system" {
			b.WriteString(contentText(m.Content))
		}
	}
	return b.String()
}
