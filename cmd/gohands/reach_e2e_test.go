package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// writeSettings writes the settings file of e's $HOME.
func (e *e2e) writeSettings(json string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.home, ".gohands"), 0o700); err != nil {
		e.t.Fatal(err)
	}
	writeFile(e.t, filepath.Join(e.home, ".gohands", "settings.json"), json)
}

// profileJSON is an LLM profile of model at e's scripted server.
func (e *e2e) profileJSON(model string) string {
	return `{"model":"openai/` + model + `","base_url":"` + e.srv.URL + `/v1","api_key":"k","num_retries":0}`
}

// requestModels lists the model of each request the scripted server got.
func requestModels(reqs []llmtest.Request) string {
	models := make([]string, len(reqs))
	for i, r := range reqs {
		models[i], _ = r.Body["model"].(string)
	}
	return strings.Join(models, ",")
}

// gohands run --tool switch_llm offers the built-in switch_llm tool with
// the settings' llm_profiles; the model switches to one and its next step
// runs on that profile's model.
func TestE2ERunSwitchLLMTool(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_s", "switch_llm", map[string]any{"profile_name": "strong", "reason": "hard step"})}},
		finishReply("done on strong"))
	e.writeSettings(`{"llm_profiles":{"strong":` + e.profileJSON("strong-1") + `}}`)
	e.mustRun(0, e.args("--tool", "switch_llm", "solve it")...)
	reqs := e.srv.Requests()
	if got := requestModels(reqs); got != "gpt-4o,strong-1" {
		t.Fatalf("models called: %s", got)
	}
	if body := string(reqs[0].RawBody); !strings.Contains(body, `"name":"switch_llm"`) || !strings.Contains(body, "- strong") {
		t.Fatalf("the model was not offered switch_llm with the profiles: %s", body)
	}
	evs, _ := e.events()
	var found bool
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		if s, ok := o.Observation.(*switchllm.Observation); ok {
			found = !s.IsError && s.ActiveModel != nil && *s.ActiveModel == "openai/strong-1"
		}
	}
	if !found {
		t.Fatalf("no successful SwitchLLMObservation: %v", kinds(evs))
	}
	// Without the flag the tool is not offered.
	e2 := newE2E(t, finishReply("done"))
	e2.writeSettings(`{"llm_profiles":{"strong":` + e2.profileJSON("strong-1") + `}}`)
	e2.mustRun(0, e2.args("solve it")...)
	if strings.Contains(string(e2.srv.LastRequest().RawBody), `"switch_llm"`) {
		t.Error("switch_llm offered without --tool switch_llm")
	}
}
