package agent_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"

	"github.com/gohands/gohands/internal/golden"
)

// topKeys returns the keys of a JSON object, in order.
func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// An agent written by the Python SDK decodes with its values, and encodes
// back with the same fields in the same order.
func TestDecodePythonAgent(t *testing.T) {
	data, err := os.ReadFile("testdata/python-agent.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := event.DecodeKinded[any](data)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := v.(*agent.Agent)
	if !ok {
		t.Fatalf("decoded %T", v)
	}
	if a.LLM.Model != "gpt-4o" || a.ToolConcurrencyLimit != 1 || !slices.Equal(a.IncludeDefaultTools, []string{"FinishTool", "ThinkTool"}) ||
		a.SystemPromptFilename != "system_prompt.j2" || a.SystemPromptKwargs["llm_security_analyzer"] != true {
		t.Fatalf("decoded %+v", a)
	}
	out, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topKeys(t, out), topKeys(t, data); !slices.Equal(got, want) {
		t.Fatalf("keys %v\nwant %v", got, want)
	}
	var gotM, wantM map[string]json.RawMessage
	json.Unmarshal(out, &gotM)
	json.Unmarshal(data, &wantM)
	for k, w := range wantM {
		if k == "llm" {
			continue // the LLM config's own round trip is llm's business
		}
		var g, wv any
		json.Unmarshal(gotM[k], &g)
		json.Unmarshal(w, &wv)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(wv)
		if !bytes.Equal(gb, wb) {
			t.Errorf("%s: got %s, want %s", k, gb, wb)
		}
	}
}

func TestAgentGolden(t *testing.T) {
	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	re := "^(terminal|file_editor)$"
	a := agent.New(cfg, []tool.Spec{{Name: "terminal", Params: event.Map[string, any]{"no_change_timeout_seconds": 30}}, {Name: "file_editor"}}, nil)
	a.FilterToolsRegex = &re
	a.ToolConcurrencyLimit = 4
	out, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	json.Indent(&buf, out, "", "  ")
	if !golden.Check(t, filepath.Join("testdata", "agent.golden.json"), buf.Bytes()) {
		t.FailNow()
	}
	back, err := event.DecodeKinded[any](out)
	if err != nil {
		t.Fatal(err)
	}
	if b := back.(*agent.Agent); b.ToolConcurrencyLimit != 4 || *b.FilterToolsRegex != re || len(b.Tools) != 2 {
		t.Fatalf("round trip %+v", b)
	}
}
