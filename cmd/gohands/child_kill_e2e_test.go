package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands serve killed with SIGKILL while a parent conversation and the
// child it launched with start_child_conversation each run a command,
// then started again on the same conversations: both are in error, the
// client runs both again, each answers its command cut short with the
// restart error (neither command runs a second time), both finish, and
// the child's model costs are in the parent's stats: at least its call
// after the restart (a run saves its model metrics when it stops and
// every 16 calls, see agent/stats.go, so the call before the SIGKILL is
// not on disk). The tool finds the server, on a port of the system's
// choosing, without $OH_INTERNAL_SERVER_URL: serve sets it to its own
// address.
func TestE2EServeChildKillAndResume(t *testing.T) {
	t.Parallel()
	const childMarker, parentMarker = "sleep 6153", "sleep 6154"
	t.Cleanup(func() {
		// SIGKILL leaves the commands the conversations started.
		for _, m := range []string{childMarker, parentMarker} {
			for _, pid := range processesWith(m) {
				exec.Command("kill", "-9", pid).Run()
			}
		}
	})
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12 at the prices below
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "child", FirstUser: "^CHILD", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{
				"command": "echo once >> child.txt && touch child-started && " + childMarker, "timeout": 7000,
			})}, Usage: usage},
			withUsage(finishReply("child done"), usage),
		}},
		llmtest.Rule{Name: "parent", FirstUser: "^delegate", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("p1", "start_child_conversation", map[string]any{"task": "CHILD: count", "isolation": "shared"})}},
			{ToolCalls: []llmtest.ToolCall{call("p2", "terminal", map[string]any{
				"command": "echo once >> parent.txt && touch parent-started && " + parentMarker, "timeout": 7000,
			})}},
			finishReply("done"),
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)

	home, work := t.TempDir(), t.TempDir()
	srv := startServeProc(t, home, work, nil, "--autotitle=false")
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0,` +
		`"input_cost_per_token":0.001,"output_cost_per_token":0.002},` +
		`"tools":[{"name":"terminal"},{"name":"start_child_conversation"}]},"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(work) + `},` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":"delegate"}],"run":true}}`
	var info struct {
		ID string `json:"id"`
	}
	srv.do("POST", "/api/conversations", body, 201, &info)
	parent := info.ID
	waitPath(t, filepath.Join(work, "child-started"), 2*time.Minute)
	waitPath(t, filepath.Join(work, "parent-started"), 2*time.Minute)
	var pinfo struct {
		Subs []string `json:"sub_conversation_ids"`
	}
	srv.do("GET", "/api/conversations/"+parent, "", 200, &pinfo)
	if len(pinfo.Subs) != 1 {
		t.Fatalf("sub_conversation_ids %v, want the child", pinfo.Subs)
	}
	child := pinfo.Subs[0]
	srv.kill()

	srv = startServeProc(t, home, work, nil, "--autotitle=false")
	for _, id := range []string{parent, child} {
		if st := srv.status(id); st != "error" {
			t.Errorf("%s: status after the restart %s, want error", id, st)
		}
		srv.do("POST", "/api/conversations/"+id+"/run", "", 200, nil)
	}
	for _, id := range []string{parent, child} {
		if st := srv.waitStatus(id, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
			t.Fatalf("%s: status %s, want finished\nserver log:\n%s", id, st, srv.logs())
		}
	}
	for _, f := range []string{"child.txt", "parent.txt"} {
		if b, _ := os.ReadFile(filepath.Join(work, f)); string(b) != "once\n" {
			t.Errorf("%s = %q: a command cut short ran again", f, b)
		}
	}
	var cut int
	for _, r := range model.Requests() {
		ids, texts := toolResults(t, r)
		if len(ids) > 0 && (ids[len(ids)-1] == "c1" || ids[len(ids)-1] == "p2") && strings.Contains(texts[len(texts)-1], conversation.RestartError) {
			cut++
		}
	}
	if cut != 2 {
		t.Errorf("%d requests answer a command with the restart error, want 2 (the parent's and the child's)", cut)
	}

	// The child's costs reach the parent's stats once its second run has
	// ended; the deadline is a hang guard.
	deadline := time.Now().Add(time.Minute)
	for {
		var st struct {
			Stats struct {
				Usage map[string]struct {
					Cost float64 `json:"accumulated_cost"`
				} `json:"usage_to_metrics"`
			} `json:"stats"`
		}
		srv.do("GET", "/api/conversations/"+parent, "", 200, &st)
		if c := st.Stats.Usage["child:"+child].Cost; c > 0.12-1e-9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parent's stats %+v, want at least the child's $0.12 under child:%s", st.Stats.Usage, child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// withUsage is r with usage u.
func withUsage(r llmtest.Reply, u llmtest.Usage) llmtest.Reply {
	r.Usage = u
	return r
}
