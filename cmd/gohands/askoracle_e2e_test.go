package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands run with an "oracle" LLM profile in the settings gives the agent
// ask_oracle: the oracle's model gets a system prompt and the question,
// no tools and none of the conversation; its answer is the observation
// and its cost is accounted under oracle:oracle.
func TestE2EAskOracle(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_o", "ask_oracle", map[string]any{"question": "Which sort suits 10 items?", "context": "I tried bubble sort."})}},
		llmtest.Reply{Text: "Use insertion sort.", Usage: llmtest.Usage{PromptTokens: 30, CompletionTokens: 5}},
		finishReply("asked"))
	if err := os.MkdirAll(filepath.Join(e.home, ".gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.home, ".gohands", "settings.json"),
		`{"llm_profiles":{"oracle":{"model":"openai/oracle-1","base_url":"`+e.srv.URL+`/v1","api_key":"k-oracle","num_retries":0}}}`)
	e.mustRun(0, e.args("sort the list")...)

	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[0].RawBody), `"ask_oracle"`) {
		t.Fatalf("the agent was not offered ask_oracle: %s", reqs[0].RawBody)
	}
	var oracle struct {
		Model    string `json:"model"`
		Tools    []any  `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := reqs[1].Decode(&oracle); err != nil {
		t.Fatal(err)
	}
	if oracle.Model != "oracle-1" || len(oracle.Tools) != 0 || len(oracle.Messages) != 2 ||
		oracle.Messages[0].Role != "system" || oracle.Messages[1].Role != "user" {
		t.Fatalf("oracle call: %s", reqs[1].RawBody)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "Bearer k-oracle" {
		t.Errorf("oracle call authorised with %q", got)
	}
	body := string(reqs[1].RawBody)
	if !strings.Contains(body, "Which sort suits 10 items?") || !strings.Contains(body, "I tried bubble sort.") || strings.Contains(body, "sort the list") {
		t.Errorf("oracle call carries the wrong text: %s", body)
	}

	evs, raw := e.events()
	obs := ofKind[*event.ObservationEvent](evs)
	var found bool
	for _, o := range obs {
		if a, ok := o.Observation.(*event.AskOracleObservation); ok {
			found = true
			if a.IsError || event.TextOf(a.Content) != "Use insertion sort." || o.ToolName != "ask_oracle" {
				t.Errorf("observation %+v", o)
			}
		}
	}
	if !found {
		t.Fatalf("no AskOracleObservation among %d events", len(evs))
	}
	var action bool
	for _, b := range raw {
		action = action || strings.Contains(string(b), `"kind":"AskOracleAction"`)
	}
	if !action {
		t.Error("no AskOracleAction stored")
	}
	state, err := os.ReadFile(filepath.Join(e.dir(), "base_state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(state), `"oracle:oracle"`) {
		t.Errorf("the oracle's metrics are not in the stats: %s", state)
	}
}

// Without an oracle profile the agent gets no ask_oracle tool.
func TestE2EAskOracleWithoutProfile(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("done"))
	e.mustRun(0, e.args("sort the list")...)
	if strings.Contains(string(e.srv.LastRequest().RawBody), `"ask_oracle"`) {
		t.Fatal("ask_oracle offered without an oracle profile")
	}
}

// gohands serve: a conversation whose agent lists ask_oracle consults the
// settings' oracle profile, and its events show the oracle's answer.
func TestE2EServeAskOracle(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_o", "ask_oracle", map[string]any{"question": "Which sort suits 10 items?"})}},
		llmtest.Reply{Text: "Use insertion sort."},
		finishReply("asked"))
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "gohands", "settings.json"),
		`{"llm_profiles":{"oracle":{"model":"openai/oracle-1","base_url":"`+model.URL+`/v1","api_key":"k-oracle","num_retries":0}}}`)
	url := startServeBin(t, home, work)
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
		`"tools":[{"name":"ask_oracle"}]},"workspace":{"kind":"LocalWorkspace","working_dir":"` + work + `"},"autotitle":false,` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":"sort the list"}],"run":true}}`
	var info struct {
		ID string `json:"id"`
	}
	if code := httpJSON(t, "POST", url+"/api/conversations", body, &info); code != http.StatusCreated {
		t.Fatalf("start: %d", code)
	}
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for {
		var st struct {
			Status string `json:"execution_status"`
		}
		httpJSON(t, "GET", url+"/api/conversations/"+info.ID, "", &st)
		if st.Status == "finished" || st.Status == "error" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s", st.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	reqs := model.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[1].RawBody), `"oracle-1"`) || strings.Contains(string(reqs[1].RawBody), `"tools"`) {
		t.Fatalf("%d model calls; the second is not the oracle's", len(reqs))
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	httpJSON(t, "GET", url+"/api/conversations/"+info.ID+"/events/search?limit=100", "", &page)
	var found bool
	for _, raw := range page.Items {
		e, err := event.Unmarshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := e.(*event.ObservationEvent); ok {
			if a, ok := o.Observation.(*event.AskOracleObservation); ok && !a.IsError && event.TextOf(a.Content) == "Use insertion sort." {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no oracle observation among %d events", len(page.Items))
	}
}

// httpJSON sends body (none if empty) and decodes the JSON reply into out.
func httpJSON(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s %s: %d: %v", method, url, resp.StatusCode, err)
	}
	return resp.StatusCode
}
