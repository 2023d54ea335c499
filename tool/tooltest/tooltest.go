// Package tooltest holds test helpers for tool authors: golden files of a
// tool's four schema export forms and of its action and observation JSON.
//
// Golden files live in the calling test's testdata/ directory. To create or
// refresh them after an intended change, run the tests with -update:
//
//	go test ./tools/mytool -update
//
// and review the diff. The -update flag is the one every golden test of the
// module shares (internal/golden); [Update] reports it.
package tooltest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/golden"
	"github.com/gohands/gohands/tool"
)

// Update reports whether the test binary was run with -update.
func Update() bool { return golden.Update() }

// Forms are the export forms Goldens checks, by file-name suffix.
var Forms = map[string]func(tool.Tool) map[string]any{
	"chat_completions": tool.ChatCompletionsFormat,
	"responses":        tool.ResponsesFormat,
	"anthropic":        tool.AnthropicFormat,
	"mcp":              tool.MCPFormat,
}

// Goldens compares the four export forms of tl with
// testdata/<name>.<form>.json, form being chat_completions, responses,
// anthropic and mcp, and rewrites them under -update.
func Goldens(t testing.TB, tl tool.Tool) {
	t.Helper()
	for _, form := range []string{"chat_completions", "responses", "anthropic", "mcp"} {
		data, err := event.MarshalJSON(Forms[form](tl))
		if err != nil {
			t.Errorf("%s form of %s: %v", form, tl.Name(), err)
			continue
		}
		GoldenJSON(t, tl.Name()+"."+form+".json", data)
	}
}

// GoldenKinded encodes v (a registered kind, such as an action or
// observation) as event.MarshalKinded does, kind last, and compares it with
// testdata/<file>.
func GoldenKinded(t testing.TB, file string, v any) {
	t.Helper()
	data, err := event.MarshalKinded(v)
	if err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	GoldenJSON(t, file, data)
}

// GoldenJSON pretty-prints the JSON data (keeping its key order) and
// compares it with testdata/<file>, or writes it there under -update.
func GoldenJSON(t testing.TB, file string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		t.Fatalf("%s: invalid JSON: %v", file, err)
	}
	b.WriteByte('\n')
	Golden(t, file, b.Bytes())
}

// Golden compares got with the contents of testdata/<file>, or writes got
// there under -update.
func Golden(t testing.TB, file string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", file), got)
}

// ReferenceParameters checks that the parameters the model sees for tl
// have the Python reference's shape — the same names, types, enums and
// required lists — by comparing them, descriptions left out (ours are our
// own), with testdata/reference_parameters.json: the reference's schema
// with its descriptions removed.
func ReferenceParameters(t testing.TB, tl tool.Tool) {
	t.Helper()
	ReferenceParametersFile(t, tl, "reference_parameters.json")
}

// ReferenceParametersFile is ReferenceParameters comparing with
// testdata/<file>, for packages holding several tools.
func ReferenceParametersFile(t testing.TB, tl tool.Tool, file string) {
	t.Helper()
	data, err := event.MarshalJSON(tool.Parameters(tl))
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, withoutDescriptions(got)); diff != "" {
		t.Errorf("parameters differ from the reference's (-want +got):\n%s", diff)
	}
}

// withoutDescriptions returns v with every "description" key removed.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch props, ok := e.(map[string]any); {
			case k == "properties" && ok:
				// Here "description" would be an argument's name.
				ps := make(map[string]any, len(props))
				for name, p := range props {
					ps[name] = withoutDescriptions(p)
				}
				out[k] = ps
			case k != "description":
				out[k] = withoutDescriptions(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutDescriptions(e)
		}
		return out
	}
	return v
}
