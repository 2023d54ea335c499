package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/gemini"
)

// mtime is the modification time gen_reference.py gives every file.
var mtime = time.Unix(1700000000, 250000000)

type refStep struct {
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"`
	Observation json.RawMessage `json:"observation"`
}

type refCase struct {
	Name  string            `json:"name"`
	Files map[string]string `json:"files"`
	Bin   map[string][]byte `json:"-"`
	Raw   map[string][]int  `json:"bin"`
	Steps []refStep         `json:"steps"`
	After map[string]string `json:"after"`
}

// deviations are steps where gohands answers differently on purpose (see
// the package documentation), by case and step index.
var deviations = map[string]map[int]string{
	"read_special": {1: "an empty file reads as empty, not as offset 0 beyond its length"},
}

// TestReferenceBehaviour replays what the reference tools did with the same
// files and calls (testdata/reference_behaviour.json, written by
// testdata/gen_reference.py): each observation, messages included, and the
// files left behind must be the same.
func TestReferenceBehaviour(t *testing.T) {
	time.Local = time.UTC // the recording's zone
	data, err := os.ReadFile(filepath.Join("testdata", "reference_behaviour.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			writeFiles(t, ws, c.Files)
			for name, b := range c.Raw {
				var data []byte
				for _, x := range b {
					data = append(data, byte(x))
				}
				if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			touchAll(t, ws)
			for i, s := range c.Steps {
				steps++
				tl, err := gemini.New(s.Tool, &gemini.Options{WorkingDir: ws})
				if err != nil {
					t.Fatal(err)
				}
				args := bytes.ReplaceAll(s.Args, []byte("$DIR"), []byte(ws))
				action, err := tl.ParseAction(args)
				if err != nil {
					t.Fatalf("step %d: %s: %v", i, args, err)
				}
				obs, err := tl.Execute(context.Background(), action)
				if err != nil {
					t.Fatal(err)
				}
				got, err := event.MarshalKinded(obs)
				if err != nil {
					t.Fatal(err)
				}
				got = bytes.ReplaceAll(got, []byte(ws), []byte("$DIR"))
				diff := cmp.Diff(decode(t, s.Observation), decode(t, got))
				if why, ok := deviations[c.Name][i]; ok {
					if diff == "" {
						t.Errorf("step %d: listed as a deviation (%s) but answers as the reference does", i, why)
					}
					continue
				}
				if diff != "" {
					t.Errorf("step %d %s %s: observation differs from the reference's (-want +got):\n%s", i, s.Tool, s.Args, diff)
				}
				touchAll(t, ws)
			}
			if diff := cmp.Diff(c.After, snapshot(t, ws)); diff != "" {
				t.Errorf("files differ from the reference's (-want +got):\n%s", diff)
			}
		})
	}
	if steps < 30 {
		t.Errorf("only %d steps replayed", steps)
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

func touchAll(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		return os.Chtimes(p, mtime, mtime)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pyDecode decodes as Python's errors="replace": one U+FFFD per bad byte.
func pyDecode(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(r)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
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
		out[rel] = pyDecode(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Each tool's parameters and definition have the reference's shape, and
// one action and observation of each encode byte for byte as the
// reference's.
func TestReferenceWire(t *testing.T) {
	samples := map[string]string{}
	data, err := os.ReadFile(filepath.Join("testdata", "reference_samples.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &samples); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 8 {
		t.Fatalf("%d samples", len(samples))
	}
	for kind, s := range samples {
		v, err := event.DecodeKinded[any]([]byte(s))
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		again, err := event.MarshalKinded(v)
		if err != nil || string(again) != s {
			t.Errorf("%s does not re-encode as the reference's:\n got %s\nwant %s", kind, again, s)
		}
	}
	for _, name := range gemini.Names {
		t.Run(name, func(t *testing.T) {
			tl, err := gemini.New(name, &gemini.Options{WorkingDir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			tooltest.ReferenceParametersFile(t, tl, "reference_parameters."+name+".json")
			def := tl.Definition()
			def.Description = ""
			got, _ := event.MarshalJSON(def)
			want, err := os.ReadFile(filepath.Join("testdata", "reference_definition."+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			w := decode(t, want).(map[string]any)
			g := decode(t, got).(map[string]any)
			delete(g, "description") // ours is our own
			if w["meta"] == nil {
				delete(w, "meta") // null and absent are the same to the reference
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("definition differs (-reference +gohands):\n%s", diff)
			}
		})
	}
}

func TestGoldens(t *testing.T) {
	tools, err := gemini.All(&gemini.Options{WorkingDir: "/workspace"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		tooltest.Goldens(t, tl)
	}
}

func TestRegistered(t *testing.T) {
	ws := t.TempDir()
	specs := []tool.Spec{}
	for _, n := range gemini.Names {
		specs = append(specs, tool.Spec{Name: n})
	}
	tools, err := tool.ResolveAll(tool.Context{WorkingDir: ws}, specs)
	if err != nil || len(tools) != 4 {
		t.Fatalf("%v %v", tools, err)
	}
}

// edit keeps CRLF line endings and refuses a file that is not UTF-8
// rather than rewriting its bytes.
func TestEditKeepsBytes(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"crlf.txt": "one\r\ntwo\r\n", "bin.dat": "\xff\xfeab"})
	tl := gemini.NewEdit(ws)
	obs, _ := tl.Run(context.Background(), &gemini.EditAction{FilePath: "crlf.txt", OldString: "two\n", NewString: "TWO\n", ExpectedReplacements: 1})
	if obs.IsError {
		t.Fatal(event.TextOf(obs.Content))
	}
	if got := snapshot(t, ws)["crlf.txt"]; got != "one\r\nTWO\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	obs, _ = tl.Run(context.Background(), &gemini.EditAction{FilePath: "bin.dat", OldString: "ab", NewString: "cd", ExpectedReplacements: 1})
	if !obs.IsError {
		t.Error("edited a binary file")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "bin.dat")); string(b) != "\xff\xfeab" {
		t.Errorf("bin.dat = %q", b)
	}
}

// A file over MaxLinesPerRead lines is read in pages that cover it.
func TestReadPages(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	for i := range 2500 {
		b.WriteString(strings.Repeat("x", i%7) + "\n")
	}
	writeFiles(t, ws, map[string]string{"big.txt": b.String()})
	tl := gemini.NewReadFile(ws)
	var lines int
	offset := 0
	for {
		obs, _ := tl.Run(context.Background(), &gemini.ReadFileAction{FilePath: "big.txt", Offset: &offset})
		if obs.IsError {
			t.Fatal(event.TextOf(obs.Content))
		}
		lines += strings.Count(obs.FileContent, "\n")
		if !obs.IsTruncated {
			break
		}
		offset = obs.LinesShown[1]
	}
	if lines != 2500 {
		t.Errorf("read %d lines in pages, want 2500", lines)
	}
}
