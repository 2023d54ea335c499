package tooltest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// A Case describes a tool for Conformance: what its definition must say,
// one valid call and what it answers, and invalid arguments.
type Case struct {
	// Tool is the tool under test; the registry must resolve its name.
	Tool tool.Tool
	// Kind, Action and Observation are the definition's kind names, as
	// the reference writes them ("FinishTool", "FinishAction", ...).
	Kind, Action, Observation string
	// ReadOnly is whether the tool declares itself read-only.
	ReadOnly bool
	// Args are valid arguments; Text is the observation's text for them.
	Args, Text string
	// BadArgs maps invalid arguments to a part of ParseAction's error.
	BadArgs map[string]string
	// Reference, when set, requires the reference's files in testdata:
	// reference_action.json and reference_observation.json (matched byte
	// for byte by the valid call's action and observation) and
	// reference_definition.json (matched with descriptions and nulls
	// removed).
	Reference bool
}

// Conformance runs the checks every tool passes, as subtests: the schema
// goldens of its four export forms, a valid call (its action and
// observation goldens), invalid arguments, resolution by name through the
// registry, and its definition's golden — and, with c.Reference, the
// reference's files.
func Conformance(t *testing.T, c Case) {
	t.Helper()
	tl := c.Tool
	t.Run("schemas", func(t *testing.T) { Goldens(t, tl) })

	t.Run("run", func(t *testing.T) {
		a, err := tl.ParseAction(json.RawMessage(c.Args))
		if err != nil {
			t.Fatal(err)
		}
		obs, err := tl.Execute(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		if got := event.TextOf(event.ObservationContent(obs)); got != c.Text {
			t.Errorf("observation text %q, want %q", got, c.Text)
		}
		GoldenKinded(t, "action.json", a)
		GoldenKinded(t, "observation.json", obs)
		if !c.Reference {
			return
		}
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
	})

	t.Run("bad arguments", func(t *testing.T) {
		for args, want := range c.BadArgs {
			_, err := tl.ParseAction(json.RawMessage(args))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ParseAction(%s) error = %v, want it to contain %q", args, err, want)
			}
		}
	})

	t.Run("registry", func(t *testing.T) {
		tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: tl.Name()})
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 1 || tools[0].Name() != tl.Name() {
			t.Fatalf("resolved %v", tools)
		}
		def := tools[0].Definition()
		if def.Kind != c.Kind || def.ActionType != c.Action || def.ObservationType != c.Observation || def.Title != tl.Name() {
			t.Errorf("definition = %+v", def)
		}
		if tool.ReadOnly(tools[0]) != c.ReadOnly {
			t.Errorf("read-only = %v, want %v", !c.ReadOnly, c.ReadOnly)
		}
	})

	t.Run("definition", func(t *testing.T) {
		def := tl.Definition()
		got, err := event.MarshalJSON(&def)
		if err != nil {
			t.Fatal(err)
		}
		GoldenJSON(t, "definition.json", got)
		if !c.Reference {
			return
		}
		// The description is ours, not the reference's.
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
		if diff := cmp.Diff(norm(ref), norm(got)); diff != "" {
			t.Errorf("definition differs from the reference's (-want +got):\n%s", diff)
		}
	})
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
