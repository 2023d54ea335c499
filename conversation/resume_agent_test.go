package conversation_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
)

// A resume runs the agent it is given but leaves the stored agent as it
// was written, unless ReplaceAgent asks: a reference process resuming the
// conversation later meets the agent (tools, condenser) it started with.
func TestResumeKeepsStoredAgent(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	backend := filestore.NewBackend(dir, nil)
	c, err := conversation.New(ctx, &echoAgent{Greeting: "stored"}, t.TempDir(), &conversation.LocalOptions{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.Close()
	base := filepath.Join(filestore.Dir(dir, id), filestore.BaseStateFile)
	before, _ := os.ReadFile(base)

	c, err = conversation.New(ctx, &echoAgent{Greeting: "runtime"}, t.TempDir(), &conversation.LocalOptions{Backend: backend, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.State().Fields().Agent.(*echoAgent); a.Greeting != "stored" {
		t.Fatalf("resume replaced the stored agent: %+v", a)
	}
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The given agent ran.
	s := c.State().Events()
	last, err := s.Event(t.Context(), s.Len()-1)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := last.(*event.MessageEvent); !ok || event.TextOf(m.LLMMessage.Content) != "runtimehi" {
		t.Errorf("last event %#v is not the runtime agent's reply", last)
	}
	c.Close()
	after, _ := os.ReadFile(base)
	if !bytes.Contains(after, []byte(`"greeting":"stored"`)) || !bytes.Contains(before, []byte(`"greeting":"stored"`)) {
		t.Fatalf("stored agent changed:\nbefore %s\nafter  %s", before, after)
	}

	c, err = conversation.New(ctx, &echoAgent{Greeting: "asked"}, t.TempDir(), &conversation.LocalOptions{Backend: backend, ID: id, ReplaceAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	after, _ = os.ReadFile(base)
	if !bytes.Contains(after, []byte(`"greeting":"asked"`)) {
		t.Fatalf("ReplaceAgent did not store the agent: %s", after)
	}
}
