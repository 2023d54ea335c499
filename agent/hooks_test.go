package agent_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/terminal"
)

func TestSecretsMaskedInObservationsAndOnDisk(t *testing.T) {
	const value = "tok-5f8a9c2e7d1b"
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"cat token.txt"}`}}},
		// The terminal exports a secret to a command that names it.
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo \"len=${#API_TOKEN} $API_TOKEN\""}`}}},
		llmtest.Reply{Text: "Read it."},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	dir, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "token.txt"), []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
		Backend: filestore.NewBackend(dir, nil),
		Secrets: map[string]secret.Source{"API_TOKEN": &secret.StaticSecret{Value: secret.New(value)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("read the token"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var seen int
	for _, e := range logEvents(t, c) {
		if o, ok := e.(*event.ObservationEvent); ok {
			text := event.TextOf(event.ObservationContent(o.Observation))
			if strings.Contains(text, value) || !strings.Contains(text, secret.Hidden) {
				t.Fatalf("observation not masked: %q", text)
			}
			if seen == 1 && !strings.Contains(text, fmt.Sprintf("len=%d", len(value))) {
				t.Fatalf("the command did not get the secret: %q", text)
			}
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("%d observations", seen)
	}
	for _, r := range p.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(event.TextOf(m.Content), value) {
				t.Fatal("the model was sent the secret")
			}
		}
	}
	c.State().Flush()
	err = filepath.WalkDir(c.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), value) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStuckLoopStops(t *testing.T) {
	same := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"again"}`}}}
	a, p := newAgent(t, same, same, same, same, same, same)
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	err := c.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Status != conversation.StatusStuck || re.Detail == "" {
		t.Fatalf("Run: %v", err)
	}
	if c.Status() != conversation.StatusStuck {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	if ce, ok := log[len(log)-1].(*event.ConversationErrorEvent); !ok || ce.Code != conversation.CodeStuck {
		t.Fatalf("last event %#v", log[len(log)-1])
	}
	t.Logf("stuck after %d LLM calls: %s", len(p.Requests()), re.Detail)
	// A new message makes it runnable again.
	p.Add(llmtest.Reply{Text: "Trying something else."})
	c.SendMessage(ctx, event.UserMessage("try something else"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAnalyzerRisksDriveConfirmation(t *testing.T) {
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo safe","security_risk":"LOW"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo risky","security_risk":"HIGH"}`}}},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, &conversation.LocalOptions{
		ConfirmationPolicy: security.NewConfirmRisky(),
		SecurityAnalyzer:   &security.LLMAnalyzer{},
	})
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	last := log[len(log)-1].(*event.ActionEvent)
	if last.SecurityRisk != event.RiskHigh {
		t.Fatalf("waiting action has risk %s", last.SecurityRisk)
	}
	var ran bool
	for _, e := range log {
		if o, ok := e.(*event.ObservationEvent); ok && strings.Contains(event.TextOf(event.ObservationContent(o.Observation)), "safe") {
			ran = true
		}
	}
	if !ran {
		t.Fatal("the LOW risk action did not run without confirmation")
	}
}

func TestRepeatedErrorsGetANudge(t *testing.T) {
	bad := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "boom", Arguments: `{"mode":"error"}`}}}
	a, p := newAgent(t, bad, bad, bad, llmtest.Reply{Text: "Giving up on boom."})
	a = withTools(a, boomTool())
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var nudges int
	for _, e := range logEvents(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceEnvironment {
			nudges++
		}
	}
	if nudges != 1 {
		t.Fatalf("%d nudges", nudges)
	}
	msgs := p.Requests()[3].Messages
	if last := msgs[len(msgs)-1]; last.Role != event.RoleUser {
		t.Fatalf("the model was not nudged before its 4th reply: %+v", last)
	}
}

// An edit's observation carries the whole file before and after in
// old_content and new_content, outside its text: those strings must be
// masked in the log too.
func TestSecretsMaskedInFileEditorObservation(t *testing.T) {
	const value = "sk-live-93c1e0aa7b"
	dir, work := t.TempDir(), t.TempDir()
	cfg := filepath.Join(work, "config.env")
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: fileeditor.Name, Arguments: fmt.Sprintf(`{"command":"str_replace","path":%q,"old_str":"DEBUG=0","new_str":"DEBUG=1"}`, cfg)}}},
		llmtest.Reply{Text: "Done."},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: fileeditor.Name})
	if err := os.WriteFile(cfg, []byte("KEY="+value+"\nDEBUG=0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
		Backend: filestore.NewBackend(dir, nil),
		Secrets: map[string]secret.Source{"KEY": &secret.StaticSecret{Value: secret.New(value)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("turn debug on"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The edit itself used the real file.
	if b, err := os.ReadFile(cfg); err != nil || string(b) != "KEY="+value+"\nDEBUG=1\n" {
		t.Fatalf("file after the edit: %q, %v", b, err)
	}
	var obs *fileeditor.Observation
	for _, e := range logEvents(t, c) {
		if o, ok := e.(*event.ObservationEvent); ok {
			if fo, ok := o.Observation.(*fileeditor.Observation); ok {
				obs = fo
			}
		}
	}
	if obs == nil || obs.OldContent == nil || obs.NewContent == nil {
		t.Fatalf("no file_editor observation with contents: %+v", obs)
	}
	for _, s := range []string{*obs.OldContent, *obs.NewContent} {
		if strings.Contains(s, value) || !strings.Contains(s, "KEY="+secret.Hidden) {
			t.Fatalf("content not masked: %q", s)
		}
	}
	c.State().Flush()
	err = filepath.WalkDir(c.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), value) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
