package conversation_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// TestChangesWaitForEndingRun: a change allowed only between runs, asked
// for once the run has stored "finished" but before it returned, waits
// for the run to return instead of failing with ErrRunning (the agent
// server's load_plugin answered 409 to a client that saw "finished").
func TestChangesWaitForEndingRun(t *testing.T) {
	for name, change := range map[string]func(*conversation.LocalConversation) error{
		"ReplaceAgent": func(c *conversation.LocalConversation) error { return c.ReplaceAgent(&echoAgent{Greeting: "new: "}) },
		"NavigateTo":   func(c *conversation.LocalConversation) error { return c.NavigateTo(context.Background(), "") },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			hold := make(chan struct{})
			c, err := conversation.New(ctx, &echoAgent{hold: hold}, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			release := sync.OnceFunc(func() { close(hold) })
			defer release() // before Close, which waits for the run
			if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
				t.Fatal(err)
			}
			ran := make(chan error, 1)
			go func() { ran <- c.Run(ctx) }()
			// The status has no event of its own here: poll it.
			for deadline := time.Now().Add(time.Minute); c.Status() != conversation.StatusFinished; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("status %s, want finished", c.Status())
				}
			}
			changed := make(chan error, 1)
			go func() { changed <- change(c) }()
			select {
			case err := <-changed:
				t.Fatalf("%s answered %v while the ending run had not returned; want it to wait", name, err)
			case <-time.After(50 * time.Millisecond): // waiting, as it should
			}
			release()
			if err := <-ran; err != nil {
				t.Fatalf("Run: %v", err)
			}
			if err := <-changed; errors.Is(err, conversation.ErrRunning) || err != nil {
				t.Errorf("%s after the run returned: %v", name, err)
			}
		})
	}
}
