package childconversation_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/childconversation"
)

func call(t *testing.T, tl tool.Tool, args string) *event.StartChildConversationObservation {
	t.Helper()
	a, err := tl.ParseAction(json.RawMessage(args))
	if err != nil {
		t.Fatalf("ParseAction(%s): %v", args, err)
	}
	o, err := tl.Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*event.StartChildConversationObservation)
}

func text(o *event.StartChildConversationObservation) string {
	var b strings.Builder
	for _, c := range o.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// The tool posts the reference's StartChildConversationRequest with the
// server's session key to the parent's children route, and reports the
// answer; a refusal, an answer that is not a child, an empty task or an
// unknown isolation are error observations that say why.
func TestLaunch(t *testing.T) {
	t.Setenv("OH_SESSION_API_KEYS_0", "sk")
	var got map[string]any
	var path, key string
	answer := `{"conversation_id":"c1","parent_conversation_id":"p1","status":"running","title":null,"url":null,"workspace":"/w","isolation":"worktree"}`
	status := http.StatusCreated
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, key = r.URL.Path, r.Header.Get("X-Session-API-Key")
		data, _ := io.ReadAll(r.Body)
		got = nil
		json.Unmarshal(data, &got)
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	t.Setenv("OH_INTERNAL_SERVER_URL", srv.URL+"/")

	tools, err := tool.Resolve(tool.Context{ConversationID: "p1"}, tool.Spec{Name: childconversation.Name})
	if err != nil {
		t.Fatal(err)
	}
	tl := tools[0]
	if d := tl.Definition(); d.Kind != "StartChildConversationTool" || d.ActionType != "StartChildConversationAction" || d.ObservationType != "StartChildConversationObservation" {
		t.Errorf("definition %+v", d)
	}
	o := call(t, tl, `{"task":"do it"}`)
	if o.IsError || o.ConversationID != "c1" || o.ParentConversationID != "p1" || o.Status != "running" || o.Isolation != "worktree" || o.Workspace != "/w" {
		t.Fatalf("observation %+v: %s", o, text(o))
	}
	if path != "/api/conversations/p1/children" || key != "sk" || got["task"] != "do it" || got["isolation"] != "worktree" || got["title"] != nil {
		t.Errorf("request %s key %q body %v", path, key, got)
	}

	status, answer = http.StatusUnprocessableEntity, `{"detail":"Parent busy"}`
	if o := call(t, tl, `{"task":"x","isolation":"shared","title":"T"}`); !o.IsError || !strings.Contains(text(o), "(422): Parent busy") {
		t.Errorf("refused: %+v %s", o, text(o))
	}
	if got["isolation"] != "shared" || got["title"] != "T" {
		t.Errorf("body %v", got)
	}
	status, answer = http.StatusCreated, `{"ok":true}`
	if o := call(t, tl, `{"task":"x"}`); !o.IsError || !strings.Contains(text(o), "not a child conversation") {
		t.Errorf("bad answer: %s", text(o))
	}
	if o := call(t, tl, `{"task":"  "}`); !o.IsError || !strings.Contains(text(o), "task must not be empty") {
		t.Errorf("empty task: %s", text(o))
	}
	if _, err := tl.ParseAction(json.RawMessage(`{"task":"x","isolation":"elsewhere"}`)); err == nil {
		t.Error("isolation elsewhere was accepted")
	}
	if _, err := tool.Resolve(tool.Context{}, tool.Spec{Name: childconversation.Name, Params: event.Map[string, any]{"nope": 1}}); err == nil {
		t.Error("an unknown param was accepted")
	}
	tools, err = tool.Resolve(tool.Context{}, tool.Spec{Name: childconversation.Name, Params: event.Map[string, any]{"launch_url": srv.URL + "/launch"}})
	if err != nil {
		t.Fatal(err)
	}
	call(t, tools[0], `{"task":"x"}`)
	if path != "/launch" {
		t.Errorf("launch_url: posted to %s", path)
	}
}

// A key handed over with UseSessionKey is sent instead of the
// environment's (gohands serve hands its key over, then removes it from
// its environment); "" goes back to the environment's.
func TestUseSessionKey(t *testing.T) {
	t.Setenv("OH_SESSION_API_KEYS_0", "from-env")
	var key string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key = r.Header.Get("X-Session-API-Key")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"conversation_id":"c1","parent_conversation_id":"p1","status":"running"}`)
	}))
	defer srv.Close()
	t.Setenv("OH_INTERNAL_SERVER_URL", srv.URL)
	tl := childconversation.New(&childconversation.Options{ParentID: "p1"})

	childconversation.UseSessionKey("handed-over")
	t.Cleanup(func() { childconversation.UseSessionKey("") })
	if o := call(t, tl, `{"task":"x"}`); o.IsError || key != "handed-over" {
		t.Errorf("with a key handed over: sent %q; %s", key, text(o))
	}
	childconversation.UseSessionKey("")
	if o := call(t, tl, `{"task":"x"}`); o.IsError || key != "from-env" {
		t.Errorf("after UseSessionKey(\"\"): sent %q; %s", key, text(o))
	}
}
