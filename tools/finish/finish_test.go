package finish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/finish"
)

func TestSchemaGoldens(t *testing.T) {
	tooltest.Goldens(t, finish.New())
}

func TestRun(t *testing.T) {
	tl := finish.New()
	a, err := tl.ParseAction(json.RawMessage(`{"message":"All tests pass."}`))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := tl.Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := event.TextOf(event.ObservationContent(obs)); got != "All tests pass." {
		t.Errorf("LLM text = %q, want the message", got)
	}
	tooltest.GoldenKinded(t, "action.json", a)
	tooltest.GoldenKinded(t, "observation.json", obs)

	// Byte-for-byte what the reference writes for the same values.
	for file, v := range map[string]any{"reference_action.json": a, "reference_observation.json": obs} {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := event.MarshalKinded(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bytes.TrimSpace(want)) {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
		back, err := event.DecodeKinded[any](want)
		if err != nil {
			t.Fatalf("decoding %s: %v", file, err)
		}
		if again, _ := event.MarshalKinded(back); !bytes.Equal(again, got) {
			t.Errorf("%s does not round-trip: %s", file, again)
		}
	}
}

func TestBadArguments(t *testing.T) {
	tl := finish.New()
	for args, want := range map[string]string{
		`{}`:                    `missing required field "message"`,
		`{"message":3}`:         `field "message": expected string, got number 3`,
		`{"message":"x","y":1}`: `unknown field "y"`,
		`[1]`:                   `arguments must be a JSON object`,
	} {
		_, err := tl.ParseAction(json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%s) error = %v, want it to contain %q", args, err, want)
		}
	}
}

func TestRegistry(t *testing.T) {
	tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: "finish"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "finish" {
		t.Fatalf("resolved %v", tools)
	}
	def := tools[0].Definition()
	if def.Kind != "FinishTool" || def.ActionType != "FinishAction" || def.ObservationType != "FinishObservation" || def.Title != "finish" {
		t.Errorf("definition = %+v", def)
	}
	if !tool.ReadOnly(tools[0]) {
		t.Error("finish is not read-only")
	}
}

// The definition stored in a SystemPromptEvent matches the reference's
// (testdata/reference_definition.json, written by the Python SDK; its
// description is replaced since ours is our own), nulls aside.
func TestDefinition(t *testing.T) {
	def := finish.New().Definition()
	got, err := event.MarshalJSON(&def)
	if err != nil {
		t.Fatal(err)
	}
	tooltest.GoldenJSON(t, "definition.json", got)
	ref, err := os.ReadFile(filepath.Join("testdata", "reference_definition.json"))
	if err != nil {
		t.Fatal(err)
	}
	norm := func(data []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "description")
		dropNulls(m)
		return m
	}
	g, w := norm(got), norm(ref)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("definition\n got %v\nwant %v", g, w)
	}
}

func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
		}
	}
}
