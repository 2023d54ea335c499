package server_test

import (
	"encoding/json"
	"fmt"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/server"
	"github.com/google/uuid"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// userText is an initial message that runs the agent.
func userText(text string, run bool) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "run": run}
}

// countEvents returns how many events of kind the conversation has.
func (ts *testServer) countEvents(id, kind string) int {
	ts.t.Helper()
	var n int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind="+kind, nil, &n)
	return n
}

// POST /interrupt cuts a running command short and records an
// InterruptEvent; POST /pause records a PauseEvent.
func TestInterruptRoute(t *testing.T) {
	// The command says when it runs: the interrupt must cut it, not
	// land before it starts (a fixed wait failed under load).
	started := filepath.Join(t.TempDir(), "started")
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"touch ` + started + `; sleep 30","timeout":60}`}}},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("sleep", true)}), &info)
	id := info["id"].(string)
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/interrupt", nil, nil)
	ts.waitStatus(id, "paused")
	if n := ts.countEvents(id, "InterruptEvent"); n != 1 {
		t.Errorf("%d InterruptEvents", n)
	}
	if n := ts.countEvents(id, "PauseEvent"); n != 0 {
		t.Errorf("%d PauseEvents after an interrupt", n)
	}
}

// eventsOf returns the conversation's events, oldest first.
func (ts *testServer) eventsOf(id string) []map[string]any {
	ts.t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	return page.Items
}

// POST /fork copies a conversation from an event into a new one (201,
// status idle, forked_from_* set, title and tags its own); the fork runs
// on the copied branch only. 404 for an unknown source or event, 409 for
// a taken id. POST /navigate moves the HEAD.
func TestForkAndNavigateRoutes(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"}, llmtest.Reply{Text: "four"})
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("first", true)}), &info)
	src := info["id"].(string)
	ts.waitStatus(src, "finished")
	ts.must(200, "POST", "/api/conversations/"+src+"/events", userText("second", true), nil)
	ts.waitStatus(src, "finished")
	var one string
	for _, e := range ts.eventsOf(src) {
		if e["kind"] == "MessageEvent" && e["source"] == "agent" && strings.Contains(fmt.Sprint(e["llm_message"]), "one") {
			one = e["id"].(string)
		}
	}
	if one == "" {
		t.Fatal("no reply one")
	}

	var fork map[string]any
	ts.must(201, "POST", "/api/conversations/"+src+"/fork", map[string]any{"title": "Alt", "tags": map[string]string{"team": "x"}, "from_event_id": one}, &fork)
	fid := fork["id"].(string)
	if fid == src || fork["execution_status"] != "idle" || fork["title"] != "Alt" || fork["leaf_event_id"] != one {
		t.Fatalf("fork info: id %v status %v title %v leaf %v", fid, fork["execution_status"], fork["title"], fork["leaf_event_id"])
	}
	if fork["forked_from_conversation_id"] != src || fork["forked_from_event_id"] != one {
		t.Fatalf("forked_from %v %v", fork["forked_from_conversation_id"], fork["forked_from_event_id"])
	}
	if tags := fork["tags"].(map[string]any); tags["team"] != "x" {
		t.Fatalf("tags %v", tags)
	}
	if evs := ts.eventsOf(fid); len(evs) != 3 {
		for _, e := range evs {
			t.Log(e["kind"], e["key"])
		}
		t.Fatalf("fork has %d events", len(evs))
	}
	ts.must(200, "POST", "/api/conversations/"+fid+"/events", userText("branch", true), nil)
	ts.waitStatus(fid, "finished")
	if said := chatTexts(model.LastRequest()); strings.Join(said, ",") != "first,one,branch" {
		t.Fatalf("fork's request %q", said)
	}
	var got map[string]any
	ts.must(200, "GET", "/api/conversations/"+fid, nil, &got)
	if got["title"] != "Alt" {
		t.Errorf("stored title %v", got["title"])
	}

	ts.must(404, "POST", "/api/conversations/"+src+"/fork", map[string]any{"from_event_id": "nope"}, nil)
	ts.must(404, "POST", "/api/conversations/"+uuid.NewString()+"/fork", map[string]any{}, nil)
	ts.must(409, "POST", "/api/conversations/"+src+"/fork", map[string]any{"id": fid}, nil)
	ts.must(422, "POST", "/api/conversations/"+src+"/fork", map[string]any{"id": "not-a-uuid"}, nil)
	var whole map[string]any
	ts.must(201, "POST", "/api/conversations/"+src+"/fork", nil, &whole)
	if whole["forked_from_event_id"] != nil || len(ts.eventsOf(whole["id"].(string))) != len(ts.eventsOf(src)) {
		t.Errorf("whole fork: %v", whole["forked_from_event_id"])
	}

	// Navigate the source back to "one", then branch from there.
	var nav map[string]any
	ts.must(200, "POST", "/api/conversations/"+src+"/navigate", map[string]any{"event_id": one}, &nav)
	if nav["leaf_event_id"] != one {
		t.Fatalf("leaf after navigate %v", nav["leaf_event_id"])
	}
	ts.must(404, "POST", "/api/conversations/"+src+"/navigate", map[string]any{"event_id": "nope"}, nil)
	ts.must(200, "POST", "/api/conversations/"+src+"/events", userText("other", true), nil)
	ts.waitStatus(src, "finished")
	if said := chatTexts(model.LastRequest()); strings.Join(said, ",") != "first,one,other" {
		t.Fatalf("request after navigate %q", said)
	}
}

// chatTexts returns the text of each non-system message of a Chat
// Completions request.
func chatTexts(r llmtest.Request) []string {
	var out []string
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		if m["role"] == "system" {
			continue
		}
		switch c := m["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			var b strings.Builder
			for _, p := range c {
				if p, ok := p.(map[string]any); ok && p["type"] == "text" {
					b.WriteString(fmt.Sprint(p["text"]))
				}
			}
			out = append(out, b.String())
		}
	}
	return out
}

// POST /switch_llm and /switch_profile move the conversation to another
// model for the next call; POST /generate_title titles it; with
// AutoTitle, the first message titles it by itself.
func TestSwitchAndTitleRoutes(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "🐛 Flaky login test"},
		llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"}, llmtest.Reply{Text: "✨ Auto"}, llmtest.Reply{Text: "four"})
	llmJSON := func(name string) map[string]any {
		return map[string]any{"model": name, "base_url": model.URL + "/v1", "api_key": "k", "num_retries": 0, "usage_id": "switched"}
	}
	profiles := llm.Profiles{}
	var cfg llm.Config
	b, _ := json.Marshal(llmJSON("openai/gpt-4.1-nano"))
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	profiles["nano"] = cfg
	ts := newTestServer(t, &server.Options{Profiles: profiles})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("the login test is flaky", true)}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")

	var title map[string]string
	ts.must(200, "POST", "/api/conversations/"+id+"/generate_title", map[string]any{"max_length": 40}, &title)
	if title["title"] != "🐛 Flaky login test" {
		t.Errorf("title %v", title)
	}
	ts.must(422, "POST", "/api/conversations/"+id+"/generate_title", map[string]any{"max_length": 0}, nil)
	// Nothing to title yet: the caller's 400, which the document lists.
	var empty map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &empty)
	ts.must(400, "POST", "/api/conversations/"+empty["id"].(string)+"/generate_title", map[string]any{}, nil)

	ts.must(200, "POST", "/api/conversations/"+id+"/switch_llm", map[string]any{"llm": llmJSON("openai/gpt-4o-mini")}, nil)
	ts.must(200, "POST", "/api/conversations/"+id+"/events", userText("again", true), nil)
	ts.waitStatus(id, "finished")
	if got := model.LastRequest().Body["model"]; got != "gpt-4o-mini" {
		t.Errorf("model after switch_llm: %v", got)
	}
	ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
	if m := info["agent"].(map[string]any)["llm"].(map[string]any)["model"]; m != "openai/gpt-4o-mini" {
		t.Errorf("agent's model %v", m)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/switch_profile", map[string]any{"profile_name": "nano"}, nil)
	ts.must(200, "POST", "/api/conversations/"+id+"/events", userText("once more", true), nil)
	ts.waitStatus(id, "finished")
	if got := model.LastRequest().Body["model"]; got != "gpt-4.1-nano" {
		t.Errorf("model after switch_profile: %v", got)
	}
	ts.must(404, "POST", "/api/conversations/"+id+"/switch_profile", map[string]any{"profile_name": "nope"}, nil)
	ts.must(422, "POST", "/api/conversations/"+id+"/switch_llm", map[string]any{}, nil)
	ts.must(404, "POST", "/api/conversations/"+uuid.NewString()+"/switch_llm", map[string]any{"llm": llmJSON("x/y")}, nil)

	// AutoTitle: the first message titles a new conversation.
	ts2 := newTestServer(t, &server.Options{AutoTitle: true})
	ts2.must(201, "POST", "/api/conversations", ts2.startBody(model, map[string]any{"initial_message": userText("add a feature", true)}), &info)
	id2 := info["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ts2.must(200, "GET", "/api/conversations/"+id2, nil, &info)
		if info["title"] != nil && info["execution_status"] == "finished" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no title: %v, status %v", info["title"], info["execution_status"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info["title"] != "✨ Auto" && info["title"] != "four" {
		t.Errorf("auto title %v", info["title"])
	}
}

// The fork route reads the body the reference's RemoteConversation.fork
// sends and answers with every member of the reference's
// ConversationInfo (both recorded from the reference in
// conversation/testdata/controls_reference.json).
func TestForkMatchesReference(t *testing.T) {
	data, err := os.ReadFile("../conversation/testdata/controls_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Fork   map[string]any `json:"fork_request_full"`
		Fields []string       `json:"conversation_info_fields"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewChat(t, llmtest.Reply{Text: "one"})
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("first", true)}), &info)
	src := info["id"].(string)
	ts.waitStatus(src, "finished")
	var from string
	for _, e := range ts.eventsOf(src) {
		if e["kind"] == "MessageEvent" && e["source"] == "user" {
			from = e["id"].(string)
		}
	}
	body := ref.Fork
	body["from_event_id"] = from
	var fork map[string]any
	ts.must(201, "POST", "/api/conversations/"+src+"/fork", body, &fork)
	for _, k := range ref.Fields {
		if _, ok := fork[k]; !ok {
			t.Errorf("fork answer lacks %q", k)
		}
	}
	wantID := ref.Fork["id"].(string) // a UUID, dashed, as ConversationInfo writes it
	if fork["id"] != wantID || fork["title"] != "Alt" || fork["forked_from_conversation_id"] != src || fork["forked_from_event_id"] != from {
		t.Fatalf("fork id %v title %v from %v %v", fork["id"], fork["title"], fork["forked_from_conversation_id"], fork["forked_from_event_id"])
	}
	if tags, _ := fork["tags"].(map[string]any); tags["team"] != "x" {
		t.Fatalf("tags %v", fork["tags"])
	}
	if n := len(ts.eventsOf(wantID)); n == 0 || n >= len(ts.eventsOf(src)) {
		t.Fatalf("fork has %d events, source %d", n, len(ts.eventsOf(src)))
	}
}
