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
	"fmt"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/workspace"
)

// NewConversation opens a conversation of agent in ws: a
// conversation.LocalConversation for a *workspace.Local, a
// remote.Conversation for a workspace served by an agent server (a
// *workspace.Remote, or any workspace with an AgentServer method, such
// as a container running one).
//
// opts are the local options; for a remote conversation the ones that
// apply are used (ID, MaxIterations, DisableStuckDetection,
// ConfirmationPolicy, SecurityAnalyzer, HookConfig, Secrets, OnEvent,
// SubscriberBuffer, Logger) and the storage ones (Backend, Store, Cipher,
// RecordStateChanges, StuckThresholds) are the server's business.
func NewConversation(ctx context.Context, agent conversation.Agent, ws workspace.Workspace, opts *conversation.LocalOptions) (conversation.Conversation, error) {
	if opts == nil {
		opts = &conversation.LocalOptions{}
	}
	switch w := ws.(type) {
	case *workspace.Local:
		return conversation.New(ctx, agent, w.WorkingDir, opts)
	case interface{ AgentServer() *workspace.Remote }:
		return remote.New(ctx, agent, w.AgentServer(), &remote.Options{
			ID:                    opts.ID,
			MaxIterations:         opts.MaxIterations,
			DisableStuckDetection: opts.DisableStuckDetection,
			ConfirmationPolicy:    opts.ConfirmationPolicy,
			SecurityAnalyzer:      opts.SecurityAnalyzer,
			HookConfig:            opts.HookConfig,
			Secrets:               opts.Secrets,
			OnEvent:               opts.OnEvent,
			SubscriberBuffer:      opts.SubscriberBuffer,
			Logger:                opts.Logger,
		})
	}
	return nil, fmt.Errorf("gohands: no conversation runs in a %T workspace", ws)
}
