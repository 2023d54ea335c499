// Package open opens a conversation wherever its workspace is: the one
// place that chooses between a conversation.LocalConversation and a
// remote.Conversation. The CLI (headless and interactive), the eval
// harness and the task tool's sub-agents open theirs here;
// gohands.NewConversation is the same function.
package open

import (
	"context"
	"fmt"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/workspace"
)

// Conversation opens a conversation of agent in ws: a
// conversation.LocalConversation for a *workspace.Local, a
// remote.Conversation for a workspace served by an agent server (a
// *workspace.Remote, or any workspace with an AgentServer method, such
// as a container running one).
//
// opts are the local options; for a remote conversation the ones that
// apply are used (ID, MaxIterations, DisableStuckDetection,
// ConfirmationPolicy, SecurityAnalyzer, HookConfig, Plugins, Secrets, OnEvent,
// SubscriberBuffer, Logger) and the storage ones (Backend, Store, Cipher,
// RecordStateChanges, StuckThresholds) are the server's business.
// FirstMessage needs a local conversation (conversation.ErrUnsupported).
func Conversation(ctx context.Context, agent conversation.Agent, ws workspace.Workspace, opts *conversation.LocalOptions) (conversation.Conversation, error) {
	if opts == nil {
		opts = &conversation.LocalOptions{}
	}
	switch w := ws.(type) {
	case *workspace.Local:
		c, err := conversation.New(ctx, agent, w.WorkingDir, opts)
		if err != nil {
			return nil, err // not a nil *LocalConversation in an interface
		}
		return c, nil
	case interface{ AgentServer() *workspace.Remote }:
		if opts.FirstMessage != nil {
			return nil, fmt.Errorf("open: a first message stored with the creation needs a local conversation: %w", conversation.ErrUnsupported)
		}
		c, err := remote.New(ctx, agent, w.AgentServer(), &remote.Options{
			ID:                    opts.ID,
			MaxIterations:         opts.MaxIterations,
			DisableStuckDetection: opts.DisableStuckDetection,
			ConfirmationPolicy:    opts.ConfirmationPolicy,
			SecurityAnalyzer:      opts.SecurityAnalyzer,
			HookConfig:            opts.HookConfig,
			Plugins:               opts.Plugins,
			Secrets:               opts.Secrets,
			OnEvent:               opts.OnEvent,
			SubscriberBuffer:      opts.SubscriberBuffer,
			Logger:                opts.Logger,
		})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("gohands: no conversation runs in a %T workspace", ws)
}
