package acp_test

import (
	"testing"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// BenchmarkTurn is one turn through a running fake ACP server: the
// prompt, eleven session/update notifications, a permission request and
// six fs and terminal requests (one of which runs /bin/sh), and the
// events they become.
func BenchmarkTurn(b *testing.B) {
	b.Setenv("GOHANDS_FAKE_ACP", "ok")
	a := acp.New(fakeBinary(b), "-test.run=^$")
	c, err := conversation.New(ctx, a, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	turn := func() {
		if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
			b.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
	turn() // starts the server
	b.ResetTimer()
	for b.Loop() {
		turn()
	}
}

// BenchmarkStartAndTurn adds starting the server: spawn, initialize,
// session/new, then one turn, and stopping it.
func BenchmarkStartAndTurn(b *testing.B) {
	b.Setenv("GOHANDS_FAKE_ACP", "ok")
	a := acp.New(fakeBinary(b), "-test.run=^$")
	for b.Loop() {
		c, err := conversation.New(ctx, a, b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
			b.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
