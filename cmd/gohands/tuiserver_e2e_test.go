package main

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// TestTUIServer: the full-screen interface drives a conversation on an
// agent server (gohands serve's server, in this process) with --server:
// the streamed answer, a command asked about and run there, a follow-up.
// The conversation is the server's; nothing is stored here.
func TestTUIServer(t *testing.T) {
	t.Parallel()
	url := startAgentServer(t)
	e := newE2E(t,
		llmtest.Reply{Text: "Making it on the server.", ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch made-on-server; echo touched-it"})}},
		llmtest.Reply{Text: "Made **the file**."},
		llmtest.Reply{Text: "Still on the server."},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home, "SESSION_API_KEY=k")
	s := startScreen(t, e, "tui-server", "--server", url, "--persistence-dir", e.data, "--llm-config", e.config)

	s.waitFor("Ask gohands", "openai/gpt-4o")
	s.typeLine("make a file")
	s.waitFor("› make a file", "Making it on the server.", "The agent wants to run 1 action")
	s.keys("y")
	scr := s.waitFor("touched-it", "Made the file.")
	t.Logf("after the approved command:\n%s", scr)
	if _, err := os.Stat(filepath.Join(e.work, "made-on-server")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	s.typeLine("still there?")
	s.waitFor("Still on the server.")
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit status %s after /exit; stderr:\n%s", code, stderr)
	}

	// The server has the conversation, finished, with both messages.
	ws := &workspace.Remote{Host: url, APIKey: "k", WorkingDir: e.work}
	infos, err := remote.List(t.Context(), ws)
	if err != nil || len(infos) != 1 {
		t.Fatalf("the server's conversations: %+v, %v", infos, err)
	}
	if infos[0].ExecutionStatus != conversation.StatusFinished || infos[0].Workspace.WorkingDir != e.work {
		t.Errorf("the server's conversation %+v", infos[0])
	}
	c, err := remote.Attach(t.Context(), ws, infos[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var users []string
	log := c.State().Events()
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceUser {
			users = append(users, event.TextOf(m.LLMMessage.Content))
		}
	}
	if !slices.Equal(users, []string{"make a file", "still there?"}) {
		t.Errorf("the server's conversation has the user messages %q", users)
	}
	// Nothing stored on this machine.
	if local, err := listConversations(e.data, func(string, error) {}); err == nil && len(local) != 0 {
		t.Errorf("stored here too: %+v", local)
	}

}

// TestTUISandboxDocker: with --sandbox docker the full-screen interface
// runs the agent on the agent server of a new container of the gohands
// image, the workspace mounted at its own path: the confirmed command runs
// there and its file appears here, the user's.
func TestTUISandboxDocker(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	e := newE2E(t,
		llmtest.Reply{Text: "Making it in the sandbox.", ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch made-in-sandbox; test -f /.dockerenv && echo inside-a-container"})}},
		llmtest.Reply{Text: "Made it in **the sandbox**."},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "tui-sandbox", "--sandbox", "docker", "--image", o.Image, "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")
	s.typeLine("make a file")
	s.waitFor("› make a file", "Making it in the sandbox.", "The agent wants to run 1 action")
	s.keys("y")
	scr := s.waitFor("inside-a-container", "Made it in the sandbox.")
	t.Logf("after the approved command:\n%s", scr)
	fi, err := os.Stat(filepath.Join(e.work, "made-in-sandbox"))
	if err != nil {
		t.Fatalf("the approved command's file is not in the workspace: %v", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		t.Errorf("the file is owned by uid %d, not %d", st.Uid, os.Getuid())
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit status %s after /exit; stderr:\n%s", code, stderr)
	}
	if local, err := listConversations(e.data, func(string, error) {}); err == nil && len(local) != 0 {
		t.Errorf("stored here too: %+v", local)
	}
}
