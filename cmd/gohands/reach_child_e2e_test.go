package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// childLaunch is the JSON the start_child_conversation tool shows the model
// after a launch: the child's ids.
type childLaunch struct {
	ConversationID       string `json:"conversation_id"`
	ParentConversationID string `json:"parent_conversation_id"`
	Status               string `json:"status"`
}

// gohands run --server <gohands serve> --tool start_child_conversation: the
// parent, run on that server, launches a child there; the model sees the
// child's ids, the server lists the child under the parent, and the child
// runs its own task (a command in the shared workspace) to the end.
func TestE2ERunServerStartChild(t *testing.T) {
	t.Parallel()
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "child", FirstUser: "^CHILD", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "echo from-child > child.txt"})}},
			finishReply("child done"),
		}},
		llmtest.Rule{Name: "parent", FirstUser: "^delegate", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("p1", "start_child_conversation", map[string]any{"task": "CHILD: write child.txt", "isolation": "shared"})}},
			finishReply("parent done"),
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	home, work := t.TempDir(), t.TempDir()
	srv := startServeProc(t, home, work, nil, "--autotitle=false")

	e := newE2E(t)
	e.env = withoutEnv(e.env, "LLM_BASE_URL", "SESSION_API_KEY", "OH_INTERNAL_SERVER_URL")
	e.env = append(e.env, "LLM_BASE_URL="+model.URL+"/v1")
	e.mustRun(0, "run", "--server", srv.URL, "--workspace", work, "--llm-config", e.config,
		"--tool", "start_child_conversation", "delegate to a child")

	var launched *childLaunch
	for _, r := range model.Requests() {
		ids, texts := toolResults(t, r)
		for i, id := range ids {
			if id != "p1" || launched != nil {
				continue
			}
			_, js, ok := strings.Cut(texts[i], "\n")
			var l childLaunch
			if !ok || json.Unmarshal([]byte(js), &l) != nil || l.ConversationID == "" {
				t.Fatalf("the parent's model got %q, want the launched child's ids", texts[i])
			}
			launched = &l
		}
	}
	if launched == nil {
		t.Fatalf("the model never saw start_child_conversation's result\nserver log:\n%s", srv.logs())
	}
	var pinfo struct {
		Subs []string `json:"sub_conversation_ids"`
	}
	srv.do("GET", "/api/conversations/"+launched.ParentConversationID, "", http.StatusOK, &pinfo)
	if len(pinfo.Subs) != 1 || pinfo.Subs[0] != launched.ConversationID {
		t.Errorf("the parent's sub_conversation_ids %v, want [%s]", pinfo.Subs, launched.ConversationID)
	}
	if st := srv.waitStatus(launched.ConversationID, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
		t.Fatalf("child status %s, want finished\nserver log:\n%s", st, srv.logs())
	}
	if b, _ := os.ReadFile(filepath.Join(work, "child.txt")); string(b) != "from-child\n" {
		t.Errorf("child.txt = %q: the child did not run its task", b)
	}
}

// A plain local gohands run has no agent server to launch a child on:
// start_child_conversation answers the model with an error saying so, at
// instead of sending the launch to whatever listens at the reference's
// default address (127.0.0.1:8000).
func TestE2ERunLocalStartChildNoServer(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("p1", "start_child_conversation", map[string]any{"task": "CHILD: x"})}},
		finishReply("done"),
	)
	e.env = withoutEnv(e.env, "OH_INTERNAL_SERVER_URL")
	e.mustRun(0, e.args("--tool", "start_child_conversation", "delegate")...)
	reqs := e.srv.Requests()
	ids, texts := toolResults(t, reqs[len(reqs)-1])
	if len(ids) != 1 || ids[0] != "p1" {
		t.Fatalf("tool results %v, want p1's", ids)
	}
	if !strings.Contains(texts[0], "agent server") || !strings.Contains(texts[0], "--server") {
		t.Errorf("the model got %q, want an error naming the missing agent server and --server", texts[0])
	}
}
