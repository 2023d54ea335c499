package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// TestFailedResumeWritesNothing: resuming a conversation whose store is
// damaged (an event that no longer reads back as it was written) fails,
// and writes nothing, however often it is tried (issue 35 item 6f: each
// try stored the new message and the run's error, 2 events).
func TestFailedResumeWritesNothing(t *testing.T) {
	t.Run("message", func(t *testing.T) {
		// A finished conversation whose task is damaged: the new message
		// and the run fail.
		dir, work, id := damagedConversation(t, func(kinds []string) (damage, cut int) {
			return slices.Index(kinds, "MessageEvent"), len(kinds)
		}, "finished")
		for try := range 3 {
			c := resume(t, dir, work, id)
			// What opening wrote (none here) is in its files.
			if err := c.State().Events().Store().(interface{ Sync() error }).Sync(); err != nil {
				t.Fatal(err)
			}
			before := eventFiles(dir, id)
			if err := c.SendMessage(ctx, event.UserMessage("again")); !errors.Is(err, filestore.ErrDamaged) {
				t.Errorf("try %d: SendMessage: %v", try, err)
			}
			if err := c.Run(ctx); !errors.Is(err, filestore.ErrDamaged) {
				t.Errorf("try %d: Run: %v", try, err)
			}
			c.Close()
			if after := eventFiles(dir, id); !slices.Equal(after, before) {
				data, _ := os.ReadFile(after[len(after)-1])
				t.Fatalf("try %d wrote %d events, the last %s", try, len(after)-len(before), data)
			}
		}
	})
	t.Run("running", func(t *testing.T) {
		// Left running by a dead process with two actions unanswered, the
		// first damaged: the recovery fails before it changes anything.
		dir, work, id := damagedConversation(t, func(kinds []string) (damage, cut int) {
			first := slices.Index(kinds, "ActionEvent")
			return first, first + 2
		}, "running")
		base := filepath.Join(filestore.Dir(dir, id), filestore.BaseStateFile)
		before := eventFiles(dir, id)
		for try := range 3 {
			b, _ := newAgent(t)
			b.Tools = append(b.Tools, tool.Spec{Name: terminal.Name})
			c, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id, RecordStateChanges: true})
			if err == nil {
				c.Close()
				t.Fatalf("try %d: resuming worked", try)
			}
			if !errors.Is(err, filestore.ErrDamaged) {
				t.Errorf("try %d: %v", try, err)
			}
			if after := eventFiles(dir, id); !slices.Equal(after, before) {
				t.Fatalf("try %d wrote %d events", try, len(after)-len(before))
			}
			if got, _ := os.ReadFile(base); !strings.Contains(string(got), `"execution_status":"running"`) {
				t.Fatalf("try %d changed the status: %s", try, got)
			}
		}
	})
}

// damagedConversation runs a conversation (two commands in one reply,
// then a text), keeps its first cut events, flips a byte of the event at
// index damage, and sets the stored status.
func damagedConversation(t *testing.T, pick func(kinds []string) (damage, cut int), status string) (dir, work, id string) {
	t.Helper()
	dir, work = t.TempDir(), t.TempDir()
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "terminal", Arguments: `{"command":"echo one"}`},
			{ID: "c2", Name: "terminal", Arguments: `{"command":"echo two"}`},
		}},
		llmtest.Reply{Text: "done"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	a.LLM = unusedModel() // the scripted model answers; the stored agent is resume's
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), RecordStateChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	id = c.ID()
	c.SendMessage(ctx, event.UserMessage("count"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	names := eventFiles(dir, id)
	var kinds []string
	for _, name := range names {
		data, _ := os.ReadFile(name)
		e, err := event.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := event.KindOf(e)
		kinds = append(kinds, k)
	}
	damage, cut := pick(kinds)
	if damage < 0 || cut > len(names) || damage >= cut-1 {
		t.Fatalf("cannot damage event %d and keep %d of %v", damage, cut, kinds)
	}
	for _, name := range names[cut:] {
		os.Remove(name)
	}
	data, _ := os.ReadFile(names[damage])
	data[len(data)/2] ^= 1 // same size, other content
	os.WriteFile(names[damage], data, 0o644)
	cdir := filestore.Dir(dir, id)
	base, _ := os.ReadFile(filepath.Join(cdir, filestore.BaseStateFile))
	base = []byte(strings.Replace(string(base), `"execution_status":"finished"`, `"execution_status":"`+status+`"`, 1))
	os.WriteFile(filepath.Join(cdir, filestore.BaseStateFile), base, 0o644)
	return dir, work, id
}

// resume opens the conversation with an agent whose model is made from
// its configuration, as an application's is (so its metrics continue the
// stored ones); the tests never get as far as calling it.
func resume(t *testing.T, dir, work, id string) *conversation.LocalConversation {
	t.Helper()
	b := agent.New(unusedModel(), []tool.Spec{{Name: terminal.Name}}, nil)
	c, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id, RecordStateChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eventFiles(dir, id string) []string {
	names, _ := filepath.Glob(filepath.Join(filestore.Dir(dir, id), "events", "event-*.json"))
	return names
}

// unusedModel is the configuration of a model on a loopback port nothing
// listens on, as newAgent's.
func unusedModel() llm.Config {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0, 0, 0
	cfg.BaseURL, cfg.APIKey = "http://127.0.0.1:9/v1", secret.New("unused")
	return cfg
}
