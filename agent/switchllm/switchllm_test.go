package switchllm_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/event"
)

// testdata holds the reference 1.58.2's switch_llm events (gen.py there):
// each decodes to this package's types and re-encodes byte for byte.
func TestReferenceEvents(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) != 3 {
		t.Fatalf("%d fixtures, want 3", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			e, err := event.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			switch e := e.(type) {
			case *event.ActionEvent:
				if a, ok := e.Action.(*switchllm.Action); !ok || a.ProfileName != "strong" {
					t.Fatalf("action %#v", e.Action)
				}
			case *event.ObservationEvent:
				if _, ok := e.Observation.(*switchllm.Observation); !ok {
					t.Fatalf("observation %#v", e.Observation)
				}
			default:
				t.Fatalf("event %T", e)
			}
			out, err := event.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("re-encoded:\n%s\nreference:\n%s", out, data)
			}
		})
	}
}

func TestSwitch(t *testing.T) {
	var asked []string
	sw := func(_ context.Context, name string) (string, error) {
		asked = append(asked, name)
		if name != "strong" {
			return "", errors.New("no such profile")
		}
		return "openai/strong-1", nil
	}
	tl := switchllm.New([]string{"strong", "cheap"}, sw)
	if d := tl.Description(); !strings.Contains(d, "- cheap\n- strong") {
		t.Errorf("description does not list the profiles, sorted: %q", d)
	}
	ctx := context.Background()
	o, err := tl.Run(ctx, &switchllm.Action{ProfileName: " strong ", Reason: "hard"})
	if err != nil || o.IsError || *o.ActiveModel != "openai/strong-1" || o.ProfileName != "strong" || *o.Reason != "hard" {
		t.Fatalf("switch: %+v %v", o, err)
	}
	o, err = tl.Run(ctx, &switchllm.Action{ProfileName: "gpt-9", Reason: "x"})
	if err != nil || !o.IsError || o.ActiveModel != nil || !strings.Contains(event.TextOf(o.Content), "- strong") {
		t.Fatalf("unknown profile: %+v %v", o, err)
	}
	if strings.Join(asked, ",") != "strong,gpt-9" {
		t.Errorf("asked %v", asked)
	}
	none := switchllm.New(nil, sw)
	if !strings.Contains(none.Description(), "no saved profiles") {
		t.Errorf("description without profiles: %q", none.Description())
	}
}
