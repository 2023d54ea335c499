package server_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// POST /api/conversations/{id}/children starts a child with the parent's
// settings and the task as its first message, runs it without waiting
// (201 with the reference's StartChildConversationResponse), links it by
// parent_conversation_id and sub_conversation_ids (kept across a
// restart), gives it a git worktree of a repository workspace or shares a
// plain one, and refuses bad input with the reference's statuses.
func TestStartChild(t *testing.T) {
	testenv.Program(t, "git")
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "first")

	root := filepath.Join(t.TempDir(), "worktrees")
	dir := t.TempDir()
	opts := &server.Options{ConversationWorktreeRoot: root, ConversationsPath: filepath.Join(dir, "convs")}
	ts := newTestServer(t, opts)
	model := llmtest.NewChat(t, llmtest.Reply{Text: "parent done"}, llmtest.Reply{Text: "child done"}, llmtest.Reply{Text: "second child done"})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"workspace":           map[string]any{"working_dir": repo, "kind": "LocalWorkspace"},
		"initial_message":     userText("parent task", true),
		"confirmation_policy": map[string]any{"kind": "NeverConfirm"},
		"max_iterations":      7,
	}), &info)
	parent := info["id"].(string)
	ts.waitStatus(parent, "finished")

	var child map[string]any
	ts.must(201, "POST", "/api/conversations/"+parent+"/children", map[string]any{"task": "child task", "title": "Kid"}, &child)
	cid, _ := child["conversation_id"].(string)
	wantDir := filepath.Join(root, cid, filepath.Base(repo))
	if child["parent_conversation_id"] != parent || child["isolation"] != "worktree" || child["workspace"] != wantDir || child["title"] != "Kid" {
		t.Fatalf("child response %v, want worktree %s", child, wantDir)
	}
	if s := child["status"]; s != "running" && s != "finished" && s != "idle" {
		t.Errorf("status %v", s)
	}
	got := ts.waitStatus(cid, "finished")
	if got["parent_conversation_id"] != parent || got["title"] != "Kid" || got["max_iterations"] != float64(7) {
		t.Errorf("child info: parent %v title %v max_iterations %v", got["parent_conversation_id"], got["title"], got["max_iterations"])
	}
	if said := chatTexts(model.LastRequest()); !slices.Equal(said, []string{"child task"}) {
		t.Errorf("the child's request %q, want only its task", said)
	}

	var shared map[string]any
	ts.must(201, "POST", "/api/conversations/"+parent+"/children", map[string]any{"task": "second", "isolation": "shared"}, &shared)
	sid := shared["conversation_id"].(string)
	if shared["isolation"] != "shared" || shared["workspace"] != repo {
		t.Fatalf("shared child %v", shared)
	}
	ts.waitStatus(sid, "finished")
	ts.must(200, "GET", "/api/conversations/"+parent, nil, &info)
	subs := info["sub_conversation_ids"].([]any)
	if len(subs) != 2 || !slices.Contains(subs, any(cid)) || !slices.Contains(subs, any(sid)) {
		t.Fatalf("sub_conversation_ids %v, want %s and %s", subs, cid, sid)
	}

	for _, bad := range []map[string]any{{}, {"task": ""}, {"task": "x", "isolation": "none"}} {
		ts.must(422, "POST", "/api/conversations/"+parent+"/children", bad, nil)
	}
	ts.must(404, "POST", "/api/conversations/"+uuid.NewString()+"/children", map[string]any{"task": "x"}, nil)

	// A restarted server knows the links from what it stored.
	if err := ts.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts2 := newTestServer(t, opts)
	ts2.must(200, "GET", "/api/conversations/"+parent, nil, &info)
	if subs := info["sub_conversation_ids"].([]any); len(subs) != 2 {
		t.Errorf("after a restart sub_conversation_ids %v", subs)
	}
	ts2.must(200, "GET", "/api/conversations/"+cid, nil, &got)
	if got["parent_conversation_id"] != parent {
		t.Errorf("after a restart parent_conversation_id %v", got["parent_conversation_id"])
	}
	// A deleted child leaves its parent's list, in a page of the search
	// as in the conversation's own info.
	ts2.must(200, "DELETE", "/api/conversations/"+sid, nil, nil)
	ts2.must(200, "GET", "/api/conversations/"+parent, nil, &info)
	if subs := info["sub_conversation_ids"].([]any); len(subs) != 1 || subs[0] != cid {
		t.Errorf("after deleting %s sub_conversation_ids %v, want [%s]", sid, subs, cid)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts2.must(200, "GET", "/api/conversations/search?limit=100", nil, &page)
	for _, it := range page.Items {
		want := 0
		if it["id"] == parent {
			want = 1
		}
		if subs, _ := it["sub_conversation_ids"].([]any); len(subs) != want {
			t.Errorf("search: %v has sub_conversation_ids %v", it["id"], subs)
		}
	}
}

// The start_child_conversation tool launches a child through the server
// at $OH_INTERNAL_SERVER_URL with the server's session key: the parent's
// observation carries the child's id and status, and goes on at once; the
// child (which has the tool too: it has the parent's agent) runs its task; a launch refused by the server is an error
// observation naming the status and its detail.
func TestChildTool(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k1"}})
	t.Setenv("OH_INTERNAL_SERVER_URL", ts.http.URL)
	t.Setenv("OH_SESSION_API_KEYS_0", "k1")
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "start_child_conversation", Arguments: `{"task":"count the files","title":"Counter","isolation":"shared"}`}}},
		llmtest.Reply{Text: "done"},
		llmtest.Reply{Text: "done"},
	)
	ag := pythonAgent(t, model.URL+"/v1")
	ag["tools"] = append(ag["tools"].([]any), map[string]any{"name": "start_child_conversation", "params": map[string]any{}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"agent": ag, "initial_message": userText("delegate", true)}), &info)
	parent := info["id"].(string)
	ts.waitStatus(parent, "finished")
	var obs []map[string]any
	for _, e := range ts.eventsOf(parent) {
		if e["kind"] == "ObservationEvent" {
			obs = append(obs, e["observation"].(map[string]any))
		}
	}
	if len(obs) != 1 {
		t.Fatalf("%d observations, want 1: %v", len(obs), obs)
	}
	ok := obs[0]
	cid, _ := ok["conversation_id"].(string)
	if ok["kind"] != "StartChildConversationObservation" || ok["is_error"] != false || ok["parent_conversation_id"] != parent || ok["title"] != "Counter" || ok["isolation"] != "shared" || cid == "" {
		t.Fatalf("launch observation %v", ok)
	}
	child := ts.waitStatus(cid, "finished")
	if child["parent_conversation_id"] != parent {
		t.Errorf("child's parent %v", child["parent_conversation_id"])
	}
	var said []string
	for _, e := range ts.eventsOf(cid) {
		if e["kind"] == "MessageEvent" && e["source"] == "user" {
			said = append(said, fmt.Sprint(e["llm_message"]))
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "count the files") {
		t.Errorf("the child's user messages %v", said)
	}

	// A launcher that refuses: the status and detail reach the model.
	t.Setenv("OH_SESSION_API_KEYS_0", "wrong")
	model2 := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "start_child_conversation", Arguments: `{"task":"x"}`}}},
		llmtest.Reply{Text: "done"},
	)
	ag2 := pythonAgent(t, model2.URL+"/v1")
	ag2["tools"] = ag["tools"]
	ts.must(201, "POST", "/api/conversations", ts.startBody(model2, map[string]any{"agent": ag2, "initial_message": userText("delegate", true)}), &info)
	p2 := info["id"].(string)
	ts.waitStatus(p2, "finished")
	for _, e := range ts.eventsOf(p2) {
		if e["kind"] == "ObservationEvent" {
			o := e["observation"].(map[string]any)
			if o["is_error"] != true || !strings.Contains(fmt.Sprint(o["content"]), "(401)") {
				t.Errorf("refused launch observation %v", o)
			}
		}
	}
}

// A child's model costs are charged to its parent: once the child's run
// has ended, the parent's stats hold the child's whole figure under
// "child:<id>" (a second run replaces it, not adds to it), and the child
// runs under the parent's confirmation policy and stuck detection.
func TestChildCostsAndPolicy(t *testing.T) {
	ts := newTestServer(t, nil)
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12 at the prices below
	model := llmtest.NewChat(t,
		llmtest.Reply{Text: "parent done", Usage: usage},
		llmtest.Reply{Text: "child done", Usage: usage},
		llmtest.Reply{Text: "child done again", Usage: usage},
	)
	ag := pythonAgent(t, model.URL+"/v1")
	ag["llm"].(map[string]any)["input_cost_per_token"] = 0.001
	ag["llm"].(map[string]any)["output_cost_per_token"] = 0.002
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"agent":               ag,
		"initial_message":     userText("parent task", true),
		"confirmation_policy": map[string]any{"kind": "ConfirmRisky", "threshold": "HIGH", "confirm_unknown": false},
		"stuck_detection":     false,
	}), &info)
	parent := info["id"].(string)
	ts.waitStatus(parent, "finished")

	var child map[string]any
	ts.must(201, "POST", "/api/conversations/"+parent+"/children", map[string]any{"task": "child task", "isolation": "shared"}, &child)
	cid := child["conversation_id"].(string)
	got := ts.waitStatus(cid, "finished")
	if p, _ := got["confirmation_policy"].(map[string]any); p["kind"] != "ConfirmRisky" || got["stuck_detection"] != false {
		t.Errorf("child's confirmation_policy %v stuck_detection %v, want the parent's", got["confirmation_policy"], got["stuck_detection"])
	}
	// waitCost waits for the parent's stats to hold want as the child's
	// cost; the charge follows the end of the child's run.
	waitCost := func(want float64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second) // a hang guard
		for {
			var info map[string]any
			ts.must(200, "GET", "/api/conversations/"+parent, nil, &info)
			stats, _ := info["stats"].(map[string]any)
			usages, _ := stats["usage_to_metrics"].(map[string]any)
			m, _ := usages[server.ChildUsagePrefix+cid].(map[string]any)
			if c, ok := m["accumulated_cost"].(float64); ok && math.Abs(c-want) < 1e-9 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the parent's stats %v, want %v under %s", usages, want, server.ChildUsagePrefix+cid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitCost(0.12)
	ts.must(200, "POST", "/api/conversations/"+cid+"/events", userText("again", true), nil)
	waitCost(0.24)
	var pinfo map[string]any
	ts.must(200, "GET", "/api/conversations/"+parent, nil, &pinfo)
	usages := pinfo["stats"].(map[string]any)["usage_to_metrics"].(map[string]any)
	var total float64
	for _, m := range usages {
		total += m.(map[string]any)["accumulated_cost"].(float64)
	}
	if math.Abs(total-0.36) > 1e-9 {
		t.Errorf("the parent's total cost %v, want 0.36 (its own $0.12 and the child's $0.24): %v", total, usages)
	}
}
