package conversationtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/conversationtest"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/server"
	_ "github.com/gohands/gohands/tools/preset" // the terminal
	"github.com/gohands/gohands/workspace"
	"net/http/httptest"
)

// TestLocal runs the suite on LocalConversations stored in a directory.
func TestLocal(t *testing.T) {
	conversationtest.Run(t, func(t *testing.T, s *conversationtest.Setup) conversation.Conversation {
		a := agent.New(s.LLM, s.Tools, nil)
		a.AgentContext = s.AgentContext
		c, err := conversation.New(t.Context(), a, s.WorkDir, &conversation.LocalOptions{
			Backend: filestore.NewBackend(t.TempDir(), nil),
			Plugins: s.Plugins,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

// TestRemote runs the suite on remote conversations of an agent server
// in this process.
func TestRemote(t *testing.T) {
	const key = "conformance-key"
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/conversations",
		WorkspacePath:     dir + "/project",
		BashEventsDir:     dir + "/bash_events",
		SessionAPIKeys:    []string{key},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hs.CloseClientConnections()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("server Close: %v", err)
		}
		hs.Close()
	})
	conversationtest.Run(t, func(t *testing.T, s *conversationtest.Setup) conversation.Conversation {
		ws := &workspace.Remote{Host: hs.URL, APIKey: key, WorkingDir: s.WorkDir}
		a := agent.New(s.LLM, s.Tools, nil)
		a.AgentContext = s.AgentContext
		c, err := remote.New(t.Context(), a, ws, &remote.Options{Plugins: s.Plugins})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
