package grep_test

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

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/grep"
)

type grepTool = tool.Typed[grep.Action, *grep.Observation]

// backends returns the tool over dir with ripgrep and with the pure-Go
// search. Without rg the ripgrep backend is a test failure in CI and
// skipped elsewhere.
func backends(t *testing.T, dir string) map[string]*grepTool {
	t.Helper()
	m := map[string]*grepTool{}
	goTool, err := grep.New(&grep.Options{WorkingDir: dir, NoRipgrep: true})
	if err != nil {
		t.Fatal(err)
	}
	m["go"] = goTool
	if rg, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ripgrep (rg) is not installed; run scripts/deps.sh")
		}
		t.Log("ripgrep (rg) is not installed: testing the pure-Go backend only")
	} else {
		rgTool, err := grep.New(&grep.Options{WorkingDir: dir, Ripgrep: rg})
		if err != nil {
			t.Fatal(err)
		}
		m["rg"] = rgTool
	}
	return m
}

// file is a fixture file; files are written in order, each one minute
// newer than the one before.
type file struct{ path, content string }

func write(t *testing.T, dir string, files ...file) {
	t.Helper()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func call(t *testing.T, tl *grepTool, args string) *grep.Observation {
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

func text(o *grep.Observation) string { return event.TextOf(o.Content) }

func abs(dir string, rels ...string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(dir, filepath.FromSlash(r))
	}
	return out
}

// fixture exercises nesting, hidden entries, ignore files, binary files,
// unicode names and contents, case, CRLF and long lines.
var fixture = []file{
	{"main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"},
	{".git/HEAD", "ref: refs/heads/main hello\n"},
	{".gitignore", "build/\n*.log\n"},
	{"util/strings.go", "package util\n\n// Hello returns a greeting.\nfunc Hello() string { return \"HELLO\" }\n"},
	{"util/strings_test.go", "package util\n\nfunc TestHello(t *testing.T) {}\n"},
	{"web/src/app.ts", "export const greet = () => 'Hello';\n"},
	{"web/src/view.tsx", "export function View() { return <p>hello</p> }\n"},
	{"web/README.md", "# Web\nNothing to see.\n"},
	{".env", "GREETING=hello\n"},
	{".config/settings.json", "{\"greeting\": \"hello\"}\n"},
	{"build/out.go", "package out // hello\n"},
	{"debug.log", "hello from the log\n"},
	{"bin/tool", "\x7fELF\x00\x00hello\x00"},
	{"bin/late-nul.dat", "hello\n" + strings.Repeat("x", 100) + "\x00\n"},
	{"docs/ünïcødé 文档.md", "Grüße: ＨＥＬＬＯ and hello\n"},
	{"docs/crlf.txt", "first line\r\nsay hello\r\n"},
	{"docs/long.txt", strings.Repeat("a", 70_000) + "hello" + strings.Repeat("b", 1_000) + "\n"},
	{"docs/empty.txt", ""},
	{"docs/nomatch.txt", "goodbye\n"},
	{"cmd/tool/main.go", "package main\n\nfunc   main() { run() }\n"},
	{"docs/new\nline.txt", "newline-name\n"},
	{"docs/unicode.txt", "رقم ٣\ncafé naïve\na\u00a0b\n"},
	{"docs/folds.txt", "\u017ftrange \u212aelvin\n"}, // long s and Kelvin sign fold to s and k
}

func TestBackendsAgree(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, fixture...)
	cases := []struct {
		args string
		want []string // relative, newest first
	}{
		{`{"pattern":"hello"}`, []string{"docs/long.txt", "docs/crlf.txt", "docs/ünïcødé 文档.md", "web/src/view.tsx", "web/src/app.ts", "util/strings_test.go", "util/strings.go", "main.go"}},
		{`{"pattern":"HeLLo","include":"*.go"}`, []string{"util/strings_test.go", "util/strings.go", "main.go"}},
		{`{"pattern":"hello","include":"*.{ts,tsx}"}`, []string{"web/src/view.tsx", "web/src/app.ts"}},
		{`{"pattern":"hello","include":"web/**"}`, []string{"web/src/view.tsx", "web/src/app.ts"}},
		{`{"pattern":"hello","include":"*.log"}`, []string{"debug.log"}},
		{`{"pattern":"hello","include":".env"}`, []string{".env"}},
		{`{"pattern":"func\\s+main"}`, []string{"cmd/tool/main.go", "main.go"}},
		{`{"pattern":"^package (main|util)$"}`, []string{"cmd/tool/main.go", "util/strings_test.go", "util/strings.go", "main.go"}},
		{`{"pattern":"hello$"}`, []string{"docs/ünïcødé 文档.md"}},
		{`{"pattern":"grüße"}`, []string{"docs/ünïcødé 文档.md"}},
		{`{"pattern":"nothing to see","path":"` + filepath.Join(dir, "web") + `"}`, []string{"web/README.md"}},
		{`{"pattern":"^$"}`, []string{"cmd/tool/main.go", "util/strings_test.go", "util/strings.go", "main.go"}},
		{`{"pattern":"line\\s+say"}`, nil}, // rg never matches across lines
		{`{"pattern":"zzz-no-such-text"}`, nil},
		{`{"pattern":"hello","include":"*.rs"}`, nil},
	}
	for name, tl := range backends(t, dir) {
		for _, tc := range cases {
			obs := call(t, tl, tc.args)
			if obs.IsError {
				t.Errorf("%s %s: error %q", name, tc.args, text(obs))
				continue
			}
			want := abs(dir, tc.want...)
			if diff := cmp.Diff(want, []string(obs.Matches)); diff != "" {
				t.Errorf("%s %s: matches (-want +got):\n%s", name, tc.args, diff)
			}
			if obs.Truncated {
				t.Errorf("%s %s: truncated", name, tc.args)
			}
			if len(want) > 0 && !strings.Contains(text(obs), strings.Join(want, "\n")) {
				t.Errorf("%s %s: text does not list the matches:\n%s", name, tc.args, text(obs))
			}
			if len(want) == 0 && !strings.HasPrefix(text(obs), "No files contain a match") {
				t.Errorf("%s %s: text = %q", name, tc.args, text(obs))
			}
		}
	}
}

// TestBackendsSame runs more patterns through both backends and only
// checks that they agree.
func TestBackendsSame(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, dir, fixture...)
	tools := backends(t, dir)
	if len(tools) < 2 {
		return // no rg: nothing to compare (a failure in CI, see backends)
	}
	for _, args := range []string{
		`{"pattern":""}`,
		`{"pattern":"."}`,
		`{"pattern":"\\bmain\\b"}`,
		`{"pattern":"[[:upper:]]{4,}"}`,
		`{"pattern":"a{20}hello"}`,
		`{"pattern":"STRANGE"}`,
		`{"pattern":"رقم\\s\\d"}`,
		`{"pattern":"caf\\w\\s"}`,
		`{"pattern":"\\ba\\sb"}`,
		`{"pattern":"na[\\w]ve"}`,
		`{"pattern":"newline-name"}`,
		`{"pattern":"kelvin"}`,
		`{"pattern":"(pack)+age\\s+ma(in)"}`,
		`{"pattern":"hello","include":"!*.go"}`,
		`{"pattern":"hello","include":"*"}`,
		`{"pattern":"package","include":"**/main.go"}`,
		`{"pattern":"package","include":"/main.go"}`,
		`{"pattern":"a","path":"` + filepath.Join(dir, "docs") + `"}`,
	} {
		got := map[string][]string{}
		for name, tl := range tools {
			obs := call(t, tl, args)
			if obs.IsError {
				t.Errorf("%s %s: error %q", name, args, text(obs))
			}
			got[name] = obs.Matches
		}
		if diff := cmp.Diff(got["rg"], got["go"]); diff != "" {
			t.Errorf("%s: rg (-) and go (+) differ:\n%s", args, diff)
		}
		if len(got["go"]) == 0 {
			t.Errorf("%s: no matches; the case tests nothing", args)
		}
	}
}

func TestTruncates(t *testing.T) {
	for _, n := range []int{100, 140} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			var files []file
			for i := range n {
				files = append(files, file{fmt.Sprintf("d%d/f%03d.txt", i%5, i), fmt.Sprintf("line\nneedle %d\n", i)})
			}
			files = append(files, file{"other.txt", "no match here\n"})
			write(t, dir, files...)
			for name, tl := range backends(t, dir) {
				obs := call(t, tl, `{"pattern":"needle \\d+"}`)
				if len(obs.Matches) != min(n, grep.MaxResults) {
					t.Fatalf("%s: %d matches, want %d", name, len(obs.Matches), min(n, grep.MaxResults))
				}
				if want := n > grep.MaxResults; obs.Truncated != want {
					t.Errorf("%s: truncated = %v, want %v", name, obs.Truncated, want)
				}
				if want := filepath.Join(dir, filepath.FromSlash(files[n-1].path)); obs.Matches[0] != want {
					t.Errorf("%s: first = %s, want the newest %s", name, obs.Matches[0], want)
				}
				if obs.Truncated != strings.Contains(text(obs), "More than 100 files matched") {
					t.Errorf("%s: truncation note does not match truncated=%v", name, obs.Truncated)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, dir, file{"sub/a.go", "package a\n"}, file{"f.txt", "x\n"})
	for name, tl := range backends(t, dir) {
		for args, want := range map[string]string{
			`{"pattern":"a","path":"sub"}`:                                   `path must be an absolute directory path, got "sub"; did you mean "` + filepath.Join(dir, "sub") + `"?`,
			`{"pattern":"a","path":"` + filepath.Join(dir, "missing") + `"}`: "does not exist",
			`{"pattern":"a","path":"` + filepath.Join(dir, "f.txt") + `"}`:   "is a file, not a directory",
			`{"pattern":"func("}`:                                            `invalid regular expression "func(": missing closing ): ` + "`func(`",
			`{"pattern":"a)"}`:                                               `invalid regular expression "a)"`,
			`{"pattern":"(?<=x)a"}`:                                          `invalid regular expression "(?<=x)a"`,
			`{"pattern":"a","include":"[abc"}`:                               `invalid include: invalid glob pattern "[abc"`,
			`{"pattern":"a","include":"{x,y"}`:                               `invalid include: invalid glob pattern "{x,y"`,
		} {
			obs := call(t, tl, args)
			if !obs.IsError || !strings.Contains(text(obs), want) {
				t.Errorf("%s %s: is_error=%v text %q, want it to contain %q", name, args, obs.IsError, text(obs), want)
			}
			if data, err := event.MarshalKinded(obs); err != nil || !bytes.Contains(data, []byte(`"matches":[]`)) {
				t.Errorf("%s %s: encoded %s, %v", name, args, data, err)
			}
		}
	}
	tl := backends(t, dir)["go"]
	for args, want := range map[string]string{
		`{}`:                           `missing required field "pattern"`,
		`{"pattern":["a"]}`:            `field "pattern": expected string`,
		`{"pattern":"a","include":1}`:  `field "include": expected string`,
		`{"pattern":"a","extra":true}`: `unknown field "extra"`,
	} {
		if _, err := tl.ParseAction(json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%s) error %v, want %q", args, err, want)
		}
	}
}

// TestRipgrepFailure checks that a broken rg is reported, not mistaken for
// "no matches".
func TestRipgrepFailure(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "rg")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'rg: something broke' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tl, err := grep.New(&grep.Options{WorkingDir: dir, Ripgrep: fake})
	if err != nil {
		t.Fatal(err)
	}
	obs := call(t, tl, `{"pattern":"x"}`)
	if !obs.IsError || !strings.Contains(text(obs), "ripgrep failed: rg: something broke") {
		t.Errorf("is_error=%v text %q", obs.IsError, text(obs))
	}
}

// TestRipgrepMissing checks that a tool made when rg was installed falls
// back to the Go search if rg has gone since.
func TestRipgrepMissing(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, file{"a.txt", "needle\n"})
	tl, err := grep.New(&grep.Options{WorkingDir: dir, Ripgrep: filepath.Join(dir, "no-such-rg")})
	if err != nil {
		t.Fatal(err)
	}
	obs := call(t, tl, `{"pattern":"needle"}`)
	if obs.IsError || len(obs.Matches) != 1 {
		t.Errorf("is_error=%v matches %v: %q", obs.IsError, obs.Matches, text(obs))
	}
}

func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, file{"a/b.txt", "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, tl := range backends(t, dir) {
		if _, err := tl.Run(ctx, &grep.Action{Pattern: "x"}); err == nil {
			t.Errorf("%s: Run with a cancelled context returned no error", name)
		}
	}
}

func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, file{"x.go", "package x\n"})
	tools, err := tool.Resolve(tool.Context{WorkingDir: dir}, tool.Spec{Name: "grep"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "grep" {
		t.Fatalf("resolved %v", tools)
	}
	def := tools[0].Definition()
	if def.Kind != "GrepTool" || def.ActionType != "GrepAction" || def.ObservationType != "GrepObservation" || def.Title != "grep" {
		t.Errorf("definition = %+v", def)
	}
	want := event.ToolAnnotations{Title: "grep", ReadOnlyHint: true, IdempotentHint: true}
	if a := tools[0].Annotations(); a == nil || *a != want {
		t.Errorf("annotations = %+v, want %+v", a, want)
	}
	a, err := tools[0].ParseAction(json.RawMessage(`{"pattern":"PACKAGE"}`))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := tools[0].Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := obs.(*grep.Observation).Matches; len(got) != 1 || filepath.Base(got[0]) != "x.go" {
		t.Errorf("matches = %v", got)
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: dir}, tool.Spec{Name: "grep", Params: event.Map[string, any]{"x": 1}}); err == nil || !strings.Contains(err.Error(), `unknown param "x"`) {
		t.Errorf("unknown param: %v", err)
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: filepath.Join(dir, "missing")}, tool.Spec{Name: "grep"}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("missing working dir: %v", err)
	}
}

func TestSchemaGoldens(t *testing.T) {
	tl, err := grep.New(&grep.Options{WorkingDir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.Goldens(t, tl)
}

func TestJSON(t *testing.T) {
	a := &grep.Action{Pattern: `func\s+main`, Path: "/work/src", Include: "*.{go,mod}"}
	full := &grep.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("Found 1 file(s) containing pattern 'x' in '/w' (filtered by '*.go'):\n/w/a.go")}},
		Matches:         event.List[string]{"/w/a.go"},
		Pattern:         "x",
		SearchPath:      "/w",
		IncludePattern:  "*.go",
		Truncated:       true,
	}
	tooltest.GoldenKinded(t, "action.json", a)
	tooltest.GoldenKinded(t, "observation.json", full)

	// Byte for byte what the reference writes for the same values, and
	// the reference's JSON decodes and re-encodes unchanged.
	for file, v := range map[string]any{
		"reference_action.json":     a,
		"reference_action_min.json": &grep.Action{Pattern: "TODO"},
		"reference_observation.json": &grep.Observation{
			ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("No files found containing pattern 'x' in directory '/w'")}},
			Pattern:         "x",
			SearchPath:      "/w",
		},
		"reference_observation_full.json": full,
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

func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	for i := range 500 {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("file%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		body := strings.Repeat("// filler line of text for the search benchmark\n", 200)
		if i%10 == 0 {
			body += "func needle() {}\n"
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	opts := map[string]*grep.Options{"go": {WorkingDir: dir, NoRipgrep: true}}
	if rg, err := exec.LookPath("rg"); err == nil {
		opts["rg"] = &grep.Options{WorkingDir: dir, Ripgrep: rg}
	}
	for _, name := range []string{"go", "rg"} {
		o, ok := opts[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			tl, err := grep.New(o)
			if err != nil {
				b.Fatal(err)
			}
			a := &grep.Action{Pattern: `func\s+needle`}
			for b.Loop() {
				obs, err := tl.Run(context.Background(), a)
				if err != nil || len(obs.Matches) != 50 {
					b.Fatalf("%v, %d matches", err, len(obs.Matches))
				}
			}
		})
	}
}

func Example() {
	dir, _ := os.MkdirTemp("", "grep-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("main ideas\n"), 0o644)

	tl, _ := grep.New(&grep.Options{WorkingDir: dir})
	obs, _ := tl.Run(context.Background(), &grep.Action{Pattern: `func\s+main`})
	for _, f := range obs.Matches {
		fmt.Println(filepath.Base(f))
	}
	// Output: main.go
}

// TestReferenceParameters checks that the parameters the model sees have
// the reference's shape: the same names, types, enums and required lists
// (testdata/reference_parameters.json is the reference's schema with the
// descriptions removed; ours are our own).
func TestReferenceParameters(t *testing.T) {
	tooltest.ReferenceParameters(t, mustGrep(t))
}

func mustGrep(t *testing.T) *grepTool {
	t.Helper()
	tl, err := grep.New(&grep.Options{WorkingDir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, file{"a/b.txt", "x\n"})
	for _, o := range []*grep.Options{{NoRipgrep: true}, {}} {
		o.WorkingDir, o.Timeout = dir, time.Nanosecond
		tl, err := grep.New(o)
		if err != nil {
			t.Fatal(err)
		}
		obs := call(t, tl, `{"pattern":"x"}`)
		if !obs.IsError || !strings.Contains(text(obs), "took longer than 1ns and was stopped") {
			t.Errorf("NoRipgrep=%v: is_error=%v %q", o.NoRipgrep, obs.IsError, text(obs))
		}
	}
}
