package browser_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/browser"
)

// reference is testdata/reference.json, written by gen_reference.py from
// the Python reference (openhands-tools 1.43.1).
type reference struct {
	ToolSetName string `json:"tool_set_name"`
	Tools       []struct {
		Name            string                `json:"name"`
		Kind            string                `json:"kind"`
		ActionKind      string                `json:"action_kind"`
		ObservationKind string                `json:"observation_kind"`
		Annotations     event.ToolAnnotations `json:"annotations"`
		Parameters      any                   `json:"parameters"`
	} `json:"tools"`
	Actions      []string `json:"actions"`
	Observations []struct {
		Name string `json:"name"`
		Raw  string `json:"raw"`
		LLM  []struct {
			Type      string   `json:"type"`
			Text      string   `json:"text"`
			ImageURLs []string `json:"image_urls"`
		} `json:"llm"`
	} `json:"observations"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReferenceTools: the same tool names, kinds, annotations and
// parameters (names, types, enums, required; descriptions are ours) as
// the reference's BrowserToolSet.
func TestReferenceTools(t *testing.T) {
	ref := loadReference(t)
	if ref.ToolSetName != browser.Name {
		t.Errorf("tool set name %q, reference %q", browser.Name, ref.ToolSetName)
	}
	b := browser.New(nil)
	defer b.Close()
	ours := map[string]tool.Tool{}
	for _, tl := range b.Tools() {
		ours[tl.Name()] = tl
	}
	seen := 0
	for _, rt := range ref.Tools {
		tl, ok := ours[rt.Name]
		if !ok {
			t.Errorf("reference tool %s missing", rt.Name)
			continue
		}
		seen++
		def := tl.Definition()
		if def.Kind != rt.Kind || def.ActionType != rt.ActionKind || def.ObservationType != rt.ObservationKind {
			t.Errorf("%s: kinds %s/%s/%s, reference %s/%s/%s", rt.Name, def.Kind, def.ActionType, def.ObservationType, rt.Kind, rt.ActionKind, rt.ObservationKind)
		}
		if a := tl.Annotations(); a == nil || *a != rt.Annotations {
			t.Errorf("%s: annotations %+v, reference %+v", rt.Name, a, rt.Annotations)
		}
		data, err := event.MarshalJSON(tool.Parameters(tl))
		if err != nil {
			t.Fatal(err)
		}
		var got any
		json.Unmarshal(data, &got)
		if diff := cmp.Diff(rt.Parameters, withoutDescriptions(got)); diff != "" {
			t.Errorf("%s: parameters differ from the reference's (-want +got):\n%s", rt.Name, diff)
		}
	}
	if seen != len(ours) {
		t.Errorf("%d of our %d tools are in the reference", seen, len(ours))
	}
}

func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "description" {
				out[k] = withoutDescriptions(e)
			}
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = withoutDescriptions(e)
		}
	}
	return v
}

// TestReferenceActions: the reference's action JSON decodes to our
// actions and encodes back byte for byte.
func TestReferenceActions(t *testing.T) {
	for _, raw := range loadReference(t).Actions {
		v, err := event.DecodeKinded[event.Action]([]byte(raw))
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		got, err := event.MarshalKinded(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != raw {
			t.Errorf("re-encoded:\n%s\nreference:\n%s", got, raw)
		}
	}
}

// TestReferenceObservations: the reference's observations decode, encode
// back byte for byte and show the model the same content (the screenshot
// saved under the same name).
func TestReferenceObservations(t *testing.T) {
	for _, f := range loadReference(t).Observations {
		t.Run(f.Name, func(t *testing.T) {
			dir := t.TempDir()
			raw := strings.ReplaceAll(f.Raw, "$SAVE_DIR", dir)
			v, err := event.DecodeKinded[any]([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := event.MarshalKinded(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != raw {
				t.Errorf("re-encoded:\n%s\nreference:\n%s", got, raw)
			}
			o, ok := v.(*browser.Observation)
			if !ok {
				t.Fatalf("decoded %T", v)
			}
			llm := event.ObservationContent(o)
			if len(llm) != len(f.LLM) {
				t.Fatalf("LLM content has %d parts, reference %d: %+v", len(llm), len(f.LLM), llm)
			}
			for i, want := range f.LLM {
				c := llm[i]
				if want.Type == "text" && (c.Type != event.ContentText || c.Text != strings.ReplaceAll(want.Text, "$SAVE_DIR", dir)) {
					t.Errorf("part %d: %+v, reference %+v", i, c, want)
				}
				if want.Type == "image" && (c.Type != event.ContentImage || !cmp.Equal(c.ImageURLs, want.ImageURLs)) {
					t.Errorf("part %d: %+v, reference %+v", i, c, want)
				}
			}
		})
	}
}

// TestRegistry: the tool set resolves from its spec, with its params
// checked.
func TestRegistry(t *testing.T) {
	needChromium(t)
	tools, err := tool.Resolve(tool.Context{WorkingDir: t.TempDir(), ConversationDir: t.TempDir()}, tool.Spec{Name: browser.Name, Params: event.Map[string, any]{"action_timeout_seconds": 60}})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.CloseAll(tools)
	if len(tools) != 14 {
		t.Errorf("%d tools", len(tools))
	}
	for _, bad := range []event.Map[string, any]{{"action_timeout_seconds": 0}, {"headless": false}} {
		if _, err := tool.Resolve(tool.Context{}, tool.Spec{Name: browser.Name, Params: bad}); err == nil {
			t.Errorf("params %v accepted", bad)
		}
	}
	// Without Chromium the set contributes no tools, as the reference's.
	tools, err = tool.Resolve(tool.Context{}, tool.Spec{Name: browser.Name, Params: event.Map[string, any]{"executable_path": "/nonexistent/chromium"}})
	if err != nil || len(tools) != 0 {
		t.Errorf("without Chromium: %d tools, %v", len(tools), err)
	}
}
