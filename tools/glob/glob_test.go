package glob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/glob"
)

// write creates the files under dir, the i-th one modified i minutes
// after a fixed time, so that the newest-first order is known.
func write(t *testing.T, dir string, files ...string) {
	t.Helper()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func newTool(t *testing.T, wd string) *tool.Typed[glob.Action, *glob.Observation] {
	t.Helper()
	tl, err := glob.New(&glob.Options{WorkingDir: wd})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// call parses args as the model's arguments and runs the tool.
func call(t *testing.T, tl *tool.Typed[glob.Action, *glob.Observation], args string) *glob.Observation {
	t.Helper()
	a, err := tl.Parse(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Parse(%s): %v", args, err)
	}
	obs, err := tl.Run(context.Background(), a)
	if err != nil {
		t.Fatalf("Run(%s): %v", args, err)
	}
	return obs
}

func text(o *glob.Observation) string { return event.TextOf(o.Content) }

// abs joins rel paths onto dir.
func abs(dir string, rels ...string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(dir, filepath.FromSlash(r))
	}
	return out
}

func TestGlob(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir,
		"main.go",              // oldest
		"cmd/app/app.go",       //
		"internal/x/x_test.go", //
		"README.md",            //
		".hidden.go",           // hidden file
		".cache/c.go",          // hidden dir
		"vendor/v.go",          // ignored below
		"ünï/日本.go",            //
		"web/src/a.ts",         //
		"web/src/b.tsx",        //
		"cmd/tool.go",          // newest
	)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("vendor/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tl := newTool(t, dir)
	for _, tc := range []struct {
		args string
		want []string // relative, newest first
	}{
		// As with rg -g, a file the pattern matches is listed even if hidden;
		// hidden and ignored directories are not entered.
		{`{"pattern":"*.go"}`, []string{"cmd/tool.go", "ünï/日本.go", ".hidden.go", "internal/x/x_test.go", "cmd/app/app.go", "main.go"}},
		{`{"pattern":"**/*.go"}`, []string{"cmd/tool.go", "ünï/日本.go", ".hidden.go", "internal/x/x_test.go", "cmd/app/app.go", "main.go"}},
		{`{"pattern":"**/*.md"}`, []string{"README.md"}},
		{`{"pattern":"cmd/*.go"}`, []string{"cmd/tool.go"}},
		{`{"pattern":"cmd/**/*.go"}`, []string{"cmd/tool.go", "cmd/app/app.go"}},
		{`{"pattern":"*.{ts,tsx}"}`, []string{"web/src/b.tsx", "web/src/a.ts"}},
		{`{"pattern":"*_test.go"}`, []string{"internal/x/x_test.go"}},
		{`{"pattern":"日本.go"}`, []string{"ünï/日本.go"}},
		{`{"pattern":".hidden.go"}`, []string{".hidden.go"}},
		{`{"pattern":"*.rs"}`, nil},
		{`{"pattern":"*.go","path":"` + filepath.Join(dir, "cmd") + `"}`, []string{"cmd/tool.go", "cmd/app/app.go"}},
		{`{"pattern":"` + filepath.Join(dir, "cmd") + `/*.go"}`, []string{"cmd/tool.go"}},
		{`{"pattern":"` + filepath.Join(dir, "cmd") + `/**/*.go"}`, []string{"cmd/tool.go", "cmd/app/app.go"}},
		{`{"pattern":"` + filepath.Join(dir, "main.go") + `"}`, []string{"main.go"}},
		// An absolute pattern with a path is taken relative to the path.
		{`{"pattern":"` + filepath.Join(dir, "cmd") + `/*.go","path":"` + dir + `"}`, []string{"cmd/tool.go"}},
		{`{"pattern":"` + dir + `/*.go","path":"` + dir + `"}`, []string{".hidden.go", "main.go"}},
	} {
		obs := call(t, tl, tc.args)
		if obs.IsError {
			t.Errorf("%s: error %q", tc.args, text(obs))
			continue
		}
		want := abs(dir, tc.want...)
		if diff := cmp.Diff(want, []string(obs.Files)); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", tc.args, diff)
		}
		if obs.Truncated {
			t.Errorf("%s: truncated", tc.args)
		}
		if len(want) > 0 && !strings.Contains(text(obs), strings.Join(want, "\n")) {
			t.Errorf("%s: text does not list the files:\n%s", tc.args, text(obs))
		}
		if len(want) == 0 && !strings.Contains(text(obs), "No files match") {
			t.Errorf("%s: text = %q", tc.args, text(obs))
		}
	}
	obs := call(t, tl, `{"pattern":"*.go"}`)
	if obs.SearchPath != dir || obs.Pattern != "*.go" {
		t.Errorf("search_path %q pattern %q", obs.SearchPath, obs.Pattern)
	}
}

func TestGlobTruncates(t *testing.T) {
	for _, n := range []int{100, 150} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			var files []string
			for i := range n {
				files = append(files, fmt.Sprintf("d%d/f%03d.txt", i%7, i))
			}
			write(t, dir, files...)
			obs := call(t, newTool(t, dir), `{"pattern":"*.txt"}`)
			if len(obs.Files) != min(n, glob.MaxResults) {
				t.Fatalf("%d files, want %d", len(obs.Files), min(n, glob.MaxResults))
			}
			if want := n > glob.MaxResults; obs.Truncated != want {
				t.Errorf("truncated = %v, want %v", obs.Truncated, want)
			}
			// Newest first: the last written file leads.
			if want := filepath.Join(dir, filepath.FromSlash(files[n-1])); obs.Files[0] != want {
				t.Errorf("first = %s, want %s", obs.Files[0], want)
			}
			if obs.Truncated != strings.Contains(text(obs), "More than 100 files matched") {
				t.Errorf("truncation note does not match truncated=%v:\n%s", obs.Truncated, text(obs)[len(text(obs))-200:])
			}
		})
	}
}

func TestGlobErrors(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, dir, "sub/a.go", "file.txt")
	tl := newTool(t, dir)
	for args, want := range map[string]string{
		`{"pattern":"*.go","path":"sub"}`:                                    `path must be an absolute directory path, got "sub"; did you mean "` + filepath.Join(dir, "sub") + `"?`,
		`{"pattern":"*.go","path":"` + filepath.Join(dir, "missing") + `"}`:  "does not exist",
		`{"pattern":"*.go","path":"` + filepath.Join(dir, "file.txt") + `"}`: "is a file, not a directory",
		`{"pattern":"[abc"}`: `invalid glob pattern "[abc"`,
		`{"pattern":"{a,b"}`: `invalid glob pattern "{a,b"`,
		`{"pattern":"/elsewhere/*.go","path":"` + dir + `"}`: `pattern "/elsewhere/*.go" is outside the search path`,
		`{"pattern":""}`: "pattern must not be empty",
		`{"pattern":"` + filepath.Join(dir, "nope") + `/**/*.go"}`: "does not exist",
	} {
		obs := call(t, tl, args)
		if !obs.IsError || !strings.Contains(text(obs), want) {
			t.Errorf("%s: is_error=%v text %q, want it to contain %q", args, obs.IsError, text(obs), want)
		}
		if obs.Files == nil {
			obs.Files = event.List[string]{}
		}
		if len(obs.Files) != 0 {
			t.Errorf("%s: files %v on error", args, obs.Files)
		}
		// Error observations still encode as the reference expects.
		if data, err := event.MarshalKinded(obs); err != nil || !bytes.Contains(data, []byte(`"files":[]`)) {
			t.Errorf("%s: encoded %s, %v", args, data, err)
		}
	}
	for args, want := range map[string]string{
		`{}`:                       `missing required field "pattern"`,
		`{"pattern":1}`:            `field "pattern": expected string`,
		`{"pattern":"*","x":1}`:    `unknown field "x"`,
		`{"pattern":"*","path":2}`: `field "path": expected string`,
	} {
		if _, err := tl.ParseAction(json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%s) error %v, want %q", args, err, want)
		}
	}
}

func TestGlobCancelled(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/b.go")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTool(t, dir).Run(ctx, &glob.Action{Pattern: "*.go"}); err == nil {
		t.Error("Run with a cancelled context returned no error")
	}
}

func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.go")
	tools, err := tool.Resolve(tool.Context{WorkingDir: dir}, tool.Spec{Name: "glob"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "glob" {
		t.Fatalf("resolved %v", tools)
	}
	def := tools[0].Definition()
	if def.Kind != "GlobTool" || def.ActionType != "GlobAction" || def.ObservationType != "GlobObservation" || def.Title != "glob" {
		t.Errorf("definition = %+v", def)
	}
	want := event.ToolAnnotations{Title: "glob", ReadOnlyHint: true, IdempotentHint: true}
	if a := tools[0].Annotations(); a == nil || *a != want {
		t.Errorf("annotations = %+v, want %+v", a, want)
	}
	if !strings.Contains(tools[0].Description(), dir) {
		t.Error("description does not name the working directory")
	}
	a, err := tools[0].ParseAction(json.RawMessage(`{"pattern":"*.go"}`))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := tools[0].Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := obs.(*glob.Observation).Files; len(got) != 1 || filepath.Base(got[0]) != "x.go" {
		t.Errorf("files = %v", got)
	}

	if _, err := tool.Resolve(tool.Context{WorkingDir: dir}, tool.Spec{Name: "glob", Params: event.Map[string, any]{"x": 1}}); err == nil || !strings.Contains(err.Error(), `unknown param "x"`) {
		t.Errorf("unknown param: %v", err)
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: filepath.Join(dir, "missing")}, tool.Spec{Name: "glob"}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("missing working dir: %v", err)
	}
}

func TestSchemaGoldens(t *testing.T) {
	tooltest.Goldens(t, newTool(t, "/"))
}

func TestJSON(t *testing.T) {
	a := &glob.Action{Pattern: "**/*.go", Path: "/work/src"}
	obs := &glob.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("Found 2 file(s) matching pattern '**/*.go' in '/work/src':\n/work/src/b.go\n/work/src/a/ü.go")}},
		Files:           event.List[string]{"/work/src/b.go", "/work/src/a/ü.go"},
		Pattern:         "**/*.go",
		SearchPath:      "/work/src",
	}
	tooltest.GoldenKinded(t, "action.json", a)
	tooltest.GoldenKinded(t, "observation.json", obs)

	// Byte for byte what the reference writes for the same values, and
	// the reference's JSON decodes and re-encodes unchanged.
	for file, v := range map[string]any{
		"reference_action.json":        a,
		"reference_action_nopath.json": &glob.Action{Pattern: "*.md"},
		"reference_observation.json":   obs,
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
}

func Example() {
	dir, _ := os.MkdirTemp("", "glob-example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "cmd", "app"), 0o755)
	os.WriteFile(filepath.Join(dir, "cmd", "app", "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# demo\n"), 0o644)

	tl, _ := glob.New(&glob.Options{WorkingDir: dir})
	obs, _ := tl.Run(context.Background(), &glob.Action{Pattern: "**/*.go"})
	for _, f := range obs.Files {
		rel, _ := filepath.Rel(dir, f)
		fmt.Println(filepath.ToSlash(rel))
	}
	// Output: cmd/app/main.go
}

// TestReferenceParameters checks that the parameters the model sees have
// the reference's shape: the same names, types, enums and required lists
// (testdata/reference_parameters.json is the reference's schema with the
// descriptions removed; ours are our own).
func TestReferenceParameters(t *testing.T) {
	tooltest.ReferenceParameters(t, newTool(t, "/"))
}

func TestRelativeWorkingDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sub/a.go")
	t.Chdir(dir)
	tl, err := glob.New(&glob.Options{WorkingDir: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	obs := call(t, tl, `{"pattern":"*.go"}`)
	if obs.IsError || len(obs.Files) != 1 || !filepath.IsAbs(obs.SearchPath) {
		t.Errorf("is_error=%v files %v search_path %q: %q", obs.IsError, obs.Files, obs.SearchPath, text(obs))
	}
}

func BenchmarkGlob(b *testing.B) {
	dir := b.TempDir()
	for i := range 5000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("e%d", i%7), fmt.Sprintf("f%04d.%s", i, []string{"go", "md", "txt"}[i%3]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tl, err := glob.New(&glob.Options{WorkingDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	a := &glob.Action{Pattern: "**/*.go"}
	for b.Loop() {
		obs, err := tl.Run(context.Background(), a)
		if err != nil || !obs.Truncated {
			b.Fatalf("%v, truncated=%v", err, obs.Truncated)
		}
	}
}

// TestSameAsRipgrep checks that the tool finds the files the reference's
// command `rg --files DIR -g PATTERN --sortr=modified` finds (run in DIR,
// where rg matches patterns with a slash as this tool does). The order
// differs on purpose: rg sorts the entries of each directory as it walks,
// by their own modification times (a directory's time is its last entry
// change), so its list is not globally newest first; this tool's is.
func TestSameAsRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ripgrep (rg) is not installed; run scripts/deps.sh")
		}
		t.Skip("ripgrep (rg) is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, dir, "a.go", "x/b.go", "x/y/c.go", ".h/d.go", "e.md", "x/.f.md", "ign/g.go", "x/y/h.txt", "ü/ñ.go")
	if err := os.WriteFile(filepath.Join(dir, ".ignore"), []byte("ign/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := newTool(t, dir)
	for _, pattern := range []string{"*.go", "**/*.go", "x/**", "*.md", "*", "x/*/*.{go,txt}", "!*.go"} {
		cmd := exec.Command(rg, "--files", dir, "-g", pattern, "-g", "!.git", "--sortr=modified", "--no-config", "--no-ignore-global")
		cmd.Dir = dir
		out, _ := cmd.Output()
		want := strings.Fields(string(out))
		obs := call(t, tl, `{"pattern":"`+pattern+`"}`)
		if diff := cmp.Diff(want, []string(obs.Files), cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("%s: rg (-) vs glob (+):\n%s", pattern, diff)
		}
	}
}

func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/b.go")
	tl, err := glob.New(&glob.Options{WorkingDir: dir, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	obs := call(t, tl, `{"pattern":"*.go"}`)
	if !obs.IsError || !strings.Contains(text(obs), "took longer than 1ns and was stopped") {
		t.Errorf("is_error=%v %q", obs.IsError, text(obs))
	}
}
