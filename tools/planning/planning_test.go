package planning_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/planning"
)

type step struct {
	Args        json.RawMessage `json:"args"`
	Observation map[string]any  `json:"observation"`
}

type recording struct {
	Initial     map[string]string `json:"initial"`
	Steps       []step            `json:"steps"`
	After       map[string]string `json:"after"`
	Legacy      map[string]any    `json:"legacy"`
	LegacyAfter map[string]string `json:"legacy_after"`
}

func load(t *testing.T) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference_behaviour.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// comparable drops what the reference and gohands may differ in: nulls
// (absent and null are the same to both), and the text of successful
// results, which is file_editor's (its own parity is tested in package
// fileeditor).
func comparable(obs map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obs {
		if v == nil || (k == "content" && obs["is_error"] == false) {
			continue
		}
		out[k] = v
	}
	return out
}

// TestReferenceBehaviour replays the reference's recording
// (testdata/gen_reference.py): the plan it starts with, which edits are
// refused and how, and the files left behind.
func TestReferenceBehaviour(t *testing.T) {
	rec := load(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "src.py"), []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl, err := planning.New(&planning.Options{WorkingDir: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if diff := cmp.Diff(rec.Initial, snapshot(t, ws)); diff != "" {
		t.Errorf("initial files (-reference +gohands):\n%s", diff)
	}
	plan := filepath.Join(ws, ".agents_tmp", "PLAN.md")
	for i, s := range rec.Steps {
		args := bytes.ReplaceAll(s.Args, []byte("$DIR"), []byte(ws))
		a, err := tl.ParseAction(args)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		obs, err := tl.Execute(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeObs(t, obs, ws)
		if diff := cmp.Diff(comparable(s.Observation), comparable(got)); diff != "" {
			t.Errorf("step %d %s (-reference +gohands):\n%s", i, s.Args, diff)
		}
	}
	if diff := cmp.Diff(rec.After, snapshot(t, ws)); diff != "" {
		t.Errorf("files after (-reference +gohands):\n%s", diff)
	}
	if _, err := os.Stat(plan); err != nil {
		t.Error(err)
	}

	legacy := t.TempDir()
	if err := os.WriteFile(filepath.Join(legacy, "PLAN.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := tool.Resolve(tool.Context{WorkingDir: legacy}, tool.Spec{Name: planning.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.CloseAll(tools)
	a, _ := tools[0].ParseAction([]byte(`{"command":"create","path":"` + filepath.Join(legacy, ".agents_tmp", "PLAN.md") + `","file_text":"x"}`))
	obs, err := tools[0].Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(comparable(rec.Legacy), comparable(decodeObs(t, obs, legacy))); diff != "" {
		t.Errorf("legacy plan (-reference +gohands):\n%s", diff)
	}
	if diff := cmp.Diff(rec.LegacyAfter, snapshot(t, legacy)); diff != "" {
		t.Errorf("legacy files (-reference +gohands):\n%s", diff)
	}
}

func decodeObs(t *testing.T, obs event.Observation, ws string) map[string]any {
	t.Helper()
	b, err := event.MarshalKinded(obs)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(ws), []byte("$DIR"))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReferenceWire(t *testing.T) {
	tl, err := planning.New(&planning.Options{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	tooltest.ReferenceParameters(t, tl)
	def := tl.Definition()
	def.Description = ""
	got, _ := event.MarshalJSON(def)
	var g, w map[string]any
	json.Unmarshal(got, &g)
	want, err := os.ReadFile(filepath.Join("testdata", "reference_definition.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(want, &w)
	delete(g, "description")
	if w["meta"] == nil {
		delete(w, "meta")
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("definition (-reference +gohands):\n%s", diff)
	}
}

func TestPlanPathParam(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	plan := filepath.Join(elsewhere, "my", "PLAN.md")
	tools, err := tool.Resolve(tool.Context{WorkingDir: ws}, tool.Spec{Name: planning.Name, Params: event.Map[string, any]{"plan_path": plan}})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.CloseAll(tools)
	if b, err := os.ReadFile(plan); err != nil || string(b) != planning.PlanHeaders() {
		t.Errorf("plan %q %v", b, err)
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: ws}, tool.Spec{Name: planning.Name, Params: event.Map[string, any]{"plan_path": "rel/PLAN.md"}}); err == nil {
		t.Error("relative plan_path accepted")
	}
}
