package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/llm/llmtest"
)

// A run that stops waiting for confirmation, or at the step limit,
// reports the tokens its state holds, not 0 (issue 32 item 8).
func TestE2EStoppedRunReportsTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		code int
		args []string
	}{
		{"confirmation", exitConfirmation, []string{"--confirm", "always"}},
		{"max-iterations", exitMaxIter, []string{"--max-iterations", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			replies := touchReplies(filepath.Join(e.work, "marker"))
			for i := range replies {
				replies[i].Usage = llmtest.Usage{PromptTokens: 1000, CompletionTokens: 20}
			}
			e.srv.Add(replies...)
			r := e.mustRun(tc.code, e.args(append(tc.args, "--json", "touch the marker")...)...)
			var res runResult
			if err := json.Unmarshal([]byte(lastLine(r.stdout)), &res); err != nil {
				t.Fatalf("result: %v\n%s", err, r.stdout)
			}
			b, err := os.ReadFile(filepath.Join(e.dir(), filestore.BaseStateFile))
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Stats struct {
					UsageToMetrics map[string]struct {
						Acc *struct {
							Prompt int `json:"prompt_tokens"`
						} `json:"accumulated_token_usage"`
					} `json:"usage_to_metrics"`
				} `json:"stats"`
			}
			json.Unmarshal(b, &st)
			stored := 0
			for _, m := range st.Stats.UsageToMetrics {
				if m.Acc != nil {
					stored += m.Acc.Prompt
				}
			}
			t.Logf("result prompt tokens %d, stored %d", res.PromptTokens, stored)
			if res.PromptTokens != 1000 || res.CompletionTokens != 20 {
				t.Errorf("the result reports %d+%d tokens, want 1000+20 (stored: %d)", res.PromptTokens, res.CompletionTokens, stored)
			}
		})
	}
}

// --conversation-id takes a unique prefix of an id, as show, rm and -r
// do (issue 32 item 7).
func TestE2EConversationIDPrefix(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("first"), finishReply("second"))
	e.mustRun(0, e.args("say something")...)
	args := []string{"run", "--workspace", e.work, "--persistence-dir", e.data, "--llm-config", e.config,
		"--conversation-id", e.id[:8], "--json", "and again"}
	r := e.mustRun(0, args...)
	var res runResult
	if err := json.Unmarshal([]byte(lastLine(r.stdout)), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, r.stdout)
	}
	if res.ConversationID != e.id || res.FinalMessage != "second" {
		t.Errorf("continued %s with %q, want %s with \"second\"", res.ConversationID, res.FinalMessage, e.id)
	}
}

// gohands version prints what --version prints (issue 32 item 9).
func TestE2EVersionCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	a, b := e.mustRun(0, "version"), e.mustRun(0, "--version")
	if !strings.HasPrefix(a.stdout, "gohands version ") || a.stdout != b.stdout {
		t.Errorf("gohands version printed %q, --version %q", a.stdout, b.stdout)
	}
}
