package agent

import (
	"context"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm"
)

// Caller is what a tool call knows of the conversation it comes from, for
// tools that act on the conversation itself: the task tool starts
// sub-conversations that inherit its model, workspace, secrets and limits,
// and adds their costs to its stats. The agent puts it in the context of
// every tool call; CallerFrom reads it.
type Caller struct {
	// Session is the calling conversation.
	Session *conversation.Session
	// Agent is the calling agent's configuration.
	Agent *Agent
	// Model is the model the agent calls.
	Model llm.Model
}

type callerKey struct{}

// CallerFrom returns the caller of the tool call ctx was given to, or
// false when ctx does not come from an agent's tool call.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// WithCaller returns ctx carrying c, as the agent passes it to tools
// (tests of such tools call it directly).
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}
