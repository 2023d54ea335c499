// Package gohands opens a conversation wherever its workspace is: the
// paper's "local to remote with one line". A program builds its agent and
// a workspace, and NewConversation returns the conversation that runs the
// agent there:
//
//	ws := &workspace.Local{WorkingDir: "."}
//	// or: ws := &workspace.Remote{Host: "http://127.0.0.1:8000", WorkingDir: "/work"}
//	conv, err := gohands.NewConversation(ctx, agent, ws, nil)
//
// The SDK's packages stay usable on their own: conversation.New for a
// local conversation, remote.New (package conversation/remote) for one on
// an agent server.
package gohands

import (
	"context"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/workspace"
)

// NewConversation opens a conversation of agent in ws: a
// conversation.LocalConversation for a *workspace.Local, a
// remote.Conversation for a workspace served by an agent server. It is
// open.Conversation (package conversation/open), where the options that
// apply to each kind are listed.
func NewConversation(ctx context.Context, agent conversation.Agent, ws workspace.Workspace, opts *conversation.LocalOptions) (conversation.Conversation, error) {
	return open.Conversation(ctx, agent, ws, opts)
}
