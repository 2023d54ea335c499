package applypatch_test

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
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/applypatch"
)

type refCase struct {
	Name        string            `json:"name"`
	Files       map[string]string `json:"files"`
	Patch       string            `json:"patch"`
	Observation json.RawMessage   `json:"observation"`
	After       map[string]string `json:"after"`
}

// TestReferenceBehaviour replays what the reference did with the same
// files and patches (testdata/reference_behaviour.json, written by
// testdata/gen_reference.py): the observation, error messages included,
// and the files left behind must be the same.
func TestReferenceBehaviour(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reference_behaviour.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			writeFiles(t, ws, c.Files)
			tl, err := applypatch.New(&applypatch.Options{WorkingDir: ws})
			if err != nil {
				t.Fatal(err)
			}
			obs, err := tl.Run(context.Background(), &applypatch.Action{Patch: strings.ReplaceAll(c.Patch, "$DIR", ws)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := event.MarshalKinded(obs)
			if err != nil {
				t.Fatal(err)
			}
			got = bytes.ReplaceAll(got, []byte(ws), []byte("$DIR"))
			if diff := cmp.Diff(decode(t, c.Observation), decode(t, got)); diff != "" {
				t.Errorf("observation differs from the reference's (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.After, snapshot(t, ws)); diff != "" {
				t.Errorf("files differ from the reference's (-want +got):\n%s", diff)
			}
		})
	}
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return v
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, text := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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

// The wire form is byte for byte the reference's, and its JSON decodes and
// re-encodes unchanged (the commit's files keep their order).
func TestJSON(t *testing.T) {
	ws := t.TempDir()
	tl, err := applypatch.New(&applypatch.Options{WorkingDir: ws})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := tl.Run(context.Background(), &applypatch.Action{Patch: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"})
	if err != nil {
		t.Fatal(err)
	}
	for file, v := range map[string]any{
		"reference_observation.json": obs,
		"reference_action.json":      &applypatch.Action{Patch: "*** Begin Patch\n*** End Patch"},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		want = bytes.TrimSpace(want)
		got, err := event.MarshalKinded(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
		back, err := event.DecodeKinded[any](want)
		if err != nil {
			t.Fatalf("decoding %s: %v", file, err)
		}
		if again, _ := event.MarshalKinded(back); !bytes.Equal(again, want) {
			t.Errorf("%s does not round-trip: %s", file, again)
		}
	}
	multi := `{"content":[],"is_error":false,"message":"Done!","fuzz":0,"commit":{"changes":{"z.txt":{"type":"add","old_content":null,"new_content":"x","move_path":null},"a.txt":{"type":"delete","old_content":"y","new_content":null,"move_path":null}}},"kind":"ApplyPatchObservation"}`
	back, err := event.DecodeKinded[any]([]byte(multi))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := event.MarshalKinded(back); string(again) != multi {
		t.Errorf("order of changes lost:\n got %s\nwant %s", again, multi)
	}
}

func TestReferenceParameters(t *testing.T) {
	tl, err := applypatch.New(&applypatch.Options{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.ReferenceParameters(t, tl)
	if a := tl.Definition(); a.Kind != "ApplyPatchTool" || a.ActionType != "ApplyPatchAction" || a.ObservationType != "ApplyPatchObservation" {
		t.Errorf("definition %+v", a)
	}
}

func TestGoldens(t *testing.T) {
	tl, err := applypatch.New(&applypatch.Options{WorkingDir: "/workspace"})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.Goldens(t, tl)
}

// A patch whose last path is refused writes nothing.
func TestNothingWrittenOnError(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "a\n"})
	tl, _ := applypatch.New(&applypatch.Options{WorkingDir: ws})
	obs, err := tl.Run(context.Background(), &applypatch.Action{Patch: "*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: ../escape.txt\n+e\n*** End Patch"})
	if err != nil {
		t.Fatal(err)
	}
	if !obs.IsError || event.TextOf(obs.Content) != "Absolute or escaping paths are not allowed" {
		t.Fatalf("got %+v", obs)
	}
	if diff := cmp.Diff(map[string]string{"a.txt": "a\n"}, snapshot(t, ws)); diff != "" {
		t.Errorf("files changed (-want +got):\n%s", diff)
	}
}

// A symbolic link inside the workspace pointing out of it is refused.
func TestSymlinkEscape(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	tl, _ := applypatch.New(&applypatch.Options{WorkingDir: ws})
	obs, _ := tl.Run(context.Background(), &applypatch.Action{Patch: "*** Begin Patch\n*** Add File: link/x.txt\n+x\n*** End Patch"})
	if !obs.IsError {
		t.Fatalf("wrote through a link out of the workspace: %+v", obs)
	}
	if _, err := os.Stat(filepath.Join(out, "x.txt")); err == nil {
		t.Error("file written outside the workspace")
	}
}

// CRLF files are matched with LF patches and stay CRLF.
func TestCRLF(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "one\r\ntwo\r\nthree\r\n"})
	tl, _ := applypatch.New(&applypatch.Options{WorkingDir: ws})
	obs, _ := tl.Run(context.Background(), &applypatch.Action{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch"})
	if obs.IsError {
		t.Fatal(event.TextOf(obs.Content))
	}
	if got := snapshot(t, ws)["a.txt"]; got != "one\r\nTWO\r\nthree\r\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// Registered under its name, it resolves with the conversation's
// directory and refuses params.
func TestRegistered(t *testing.T) {
	ws := t.TempDir()
	tools, err := tool.Resolve(tool.Context{WorkingDir: ws}, tool.Spec{Name: applypatch.Name})
	if err != nil || len(tools) != 1 || tools[0].Name() != "apply_patch" {
		t.Fatalf("%v %v", tools, err)
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: ws}, tool.Spec{Name: applypatch.Name, Params: event.Map[string, any]{"x": 1}}); err == nil {
		t.Error("params accepted")
	}
}
