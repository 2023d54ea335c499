package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// gohands serve titles conversations by default, as the reference's
// server does: a start request leaving autotitle at its default (true) is
// titled from its first message with a model call, one with autotitle
// false is not. The playbook's title rule matches gohands' title prompt,
// so the scripted agent's replies are not taken by the title call.
func TestE2EServeAutotitleDefault(t *testing.T) {
	t.Parallel()
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "title", System: "(?i)write a short title", Replies: []llmtest.Reply{{Text: "🎨 Colour chat"}}, Loop: true},
		llmtest.Rule{Name: "agent", Replies: []llmtest.Reply{{Text: "ok"}}, Loop: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	home, work := t.TempDir(), t.TempDir()
	url := startServeBin(t, home, work)

	start := func(extra string) string {
		body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
			`"tools":[]},"workspace":{"kind":"LocalWorkspace","working_dir":"` + work + `"},` + extra +
			`"initial_message":{"role":"user","content":[{"type":"text","text":"let us talk about colours"}],"run":true}}`
		resp, err := http.Post(url+"/api/conversations", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var info struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("start: %d %v", resp.StatusCode, err)
		}
		return info.ID
	}
	get := func(id string) (title *string, status string) {
		resp, err := http.Get(url + "/api/conversations/" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var info struct {
			Title  *string `json:"title"`
			Status string  `json:"execution_status"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
			t.Fatal(err)
		}
		return info.Title, info.Status
	}
	titleCalls := func() int {
		n := 0
		for _, r := range model.Requests() {
			if strings.Contains(string(r.RawBody), "Write a short title") {
				n++
			}
		}
		return n
	}

	titled := start("")
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		title, status := get(titled)
		if title != nil && status == "finished" {
			if *title != "🎨 Colour chat" {
				t.Fatalf("title %q, want the model's", *title)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no title by default: title %v, status %s", title, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := titleCalls(); n != 1 {
		t.Fatalf("%d title calls for one titled conversation", n)
	}

	untitled := start(`"autotitle":false,`)
	for {
		title, status := get(untitled)
		if status == "finished" {
			if title != nil {
				t.Errorf("autotitle false: titled %q", *title)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("autotitle false: status %s", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := titleCalls(); n != 1 {
		t.Errorf("%d title calls: autotitle false made one", n)
	}
}

// startServeBin starts `gohands serve` (see startServeProc) and returns
// its URL.
func startServeBin(t *testing.T, home, work string) string {
	t.Helper()
	return startServeProc(t, home, work, nil).URL
}
