package gohands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gohands/gohands"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/workspace"
)

// otherWorkspace is a workspace gohands knows no conversation for.
type otherWorkspace struct{ workspace.Local }

func TestNewConversationKinds(t *testing.T) {
	ctx := context.Background()
	if _, err := gohands.NewConversation(ctx, nil, &otherWorkspace{}, nil); err == nil || !strings.Contains(err.Error(), "otherWorkspace") {
		t.Errorf("unknown workspace: %v", err)
	}
	// A local workspace makes a LocalConversation (no agent: ErrNoAgent
	// from conversation.New), a remote one a remote conversation.
	if _, err := gohands.NewConversation(ctx, nil, &workspace.Local{WorkingDir: t.TempDir()}, nil); err != conversation.ErrNoAgent {
		t.Errorf("local: %v, want ErrNoAgent", err)
	}
	if _, err := gohands.NewConversation(ctx, nil, &workspace.Remote{Host: "http://127.0.0.1:1", WorkingDir: "/w"}, nil); err != conversation.ErrNoAgent {
		t.Errorf("remote: %v, want ErrNoAgent", err)
	}
	var _ conversation.Conversation = (*remote.Conversation)(nil)
}
