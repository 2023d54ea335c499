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

// gohands serve: an agent with route_task_to_model (spec
// ClassifyAndSwitchLLMTool and an inline meta-profile, as the reference
// takes it) asks the classifier profile, and its next step runs on the
// chosen class's profile.
func TestE2EServeRouteTask(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_r", "route_task_to_model", map[string]any{})}},
		llmtest.Reply{Text: "2"},
		finishReply("routed"))
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	prof := func(m string) string {
		return `{"model":"openai/` + m + `","base_url":"` + model.URL + `/v1","api_key":"k","num_retries":0}`
	}
	writeFile(t, filepath.Join(home, "gohands", "settings.json"),
		`{"llm_profiles":{"cls":`+prof("cls-1")+`,"strong":`+prof("strong-1")+`,"cheap":`+prof("cheap-1")+`}}`)
	url := startServeBin(t, home, work)
	meta := `{"classifier_model":"cls","classes":[{"description":"routine edits","model":"cheap"},{"description":"hard algorithms","model":"strong"}]}`
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
		`"tools":[{"name":"ClassifyAndSwitchLLMTool","params":{"meta_profile":` + meta + `}}]},"workspace":{"kind":"LocalWorkspace","working_dir":"` + work + `"},"autotitle":false,` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":"write a faster sort"}],"run":true}}`
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
	models := make([]string, len(reqs))
	for i, r := range reqs {
		models[i], _ = r.Body["model"].(string)
	}
	if strings.Join(models, ",") != "gpt-4o,cls-1,strong-1" {
		t.Fatalf("models called: %v", models)
	}
	if c := string(reqs[1].RawBody); !strings.Contains(c, "hard algorithms") || !strings.Contains(c, "write a faster sort") || strings.Contains(c, `"tools"`) {
		t.Errorf("classifier call: %s", c)
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
			if c, ok := o.Observation.(*event.ClassifyAndSwitchLLMObservation); ok {
				found = !c.IsError && c.Model == "strong" && c.ChosenClass == "hard algorithms" && c.ActiveModel == "openai/strong-1"
				if !found {
					t.Errorf("observation %s", raw)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no routing observation among %d events", len(page.Items))
	}
}
