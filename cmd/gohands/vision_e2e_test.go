package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands serve: an agent whose model cannot see images, with a vision
// profile saved, gets inspect_image_with_vision by itself; the profile's
// model receives the question and the user's image in the Chat wire
// format, and its answer is the observation.
func TestE2EServeVisionInspect(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_v", "inspect_image_with_vision", map[string]any{"image_index": 0, "question": "What colour is the square?"})}},
		llmtest.Reply{Text: "Red."},
		finishReply("it is red"))
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "gohands", "settings.json"),
		`{"llm_profiles":{"eye":{"model":"openai/gpt-4o","base_url":"`+model.URL+`/v1","api_key":"k","num_retries":0}}}`)
	url := startServeBin(t, home, work)
	const img = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-3.5-turbo","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
		`"tools":[]},"workspace":{"kind":"LocalWorkspace","working_dir":"` + work + `"},"autotitle":false,` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":"what is in the picture?"},{"type":"image","image_urls":["` + img + `"]}],"run":true}}`
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
	if len(reqs) != 3 || !strings.Contains(string(reqs[0].RawBody), `"inspect_image_with_vision"`) {
		t.Fatalf("%d model calls; the first offers no vision tool", len(reqs))
	}
	var vision struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := reqs[1].Decode(&vision); err != nil {
		t.Fatal(err)
	}
	if vision.Model != "gpt-4o" || len(vision.Messages) != 2 || vision.Messages[0].Role != "system" {
		t.Fatalf("vision call: %s", reqs[1].RawBody)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(vision.Messages[1].Content, &parts); err != nil {
		t.Fatalf("user content %s: %v", vision.Messages[1].Content, err)
	}
	if len(parts) != 2 || parts[0].Text != "What colour is the square?" || parts[1].Type != "image_url" || parts[1].ImageURL.URL != img {
		t.Fatalf("vision call's user message: %s", vision.Messages[1].Content)
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
			if v, ok := o.Observation.(*visioninspect.Observation); ok {
				found = !v.IsError && v.Answer != nil && *v.Answer == "Red." && *v.ProfileName == "eye" && *v.Model == "openai/gpt-4o" && v.Question == "What colour is the square?"
				if !found {
					t.Errorf("observation %s", raw)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no vision observation among %d events", len(page.Items))
	}
}
