package pyclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	_ "github.com/gohands/gohands/agent/acp" // as cmd/gohands: ACPAgent
	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/golden"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/internal/wire"
	"github.com/gohands/gohands/security"
	_ "github.com/gohands/gohands/server" // every kind and tool gohands serve knows
	"github.com/gohands/gohands/tool"
)

// TestKindsAndFields158 lists every kind of the reference 1.58.2 (each
// concrete DiscriminatedUnionMixin subclass its packages define) and
// every field of its StartConversationRequest, with what gohands does
// with it, and compares the list with testdata/kinds158.golden. The
// status is measured, not declared: a kind is "typed" when gohands
// registers it, otherwise an object of that kind is decoded where the
// kind is read and encoded again; a field's status comes from
// api/protocol.StartRequest and the status list of server/doc.go. A kind
// or field that 1.58.2 has and the golden does not list fails the test
// (-update rewrites the golden).
func TestKindsAndFields158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	cmd := exec.Command(py, filepath.Join("testdata", "kinds158.py"))
	cmd.Env = append(os.Environ(), "OPENHANDS_SUPPRESS_BANNER=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kinds158.py: %v\n%s", err, stderr.Bytes())
	}
	if s := stderr.String(); strings.Contains(s, "not imported") {
		t.Logf("kinds158.py: %s", s)
	}
	var ref struct {
		Kinds []struct {
			Name   string `json:"name"`
			Family string `json:"family"`
		} `json:"kinds"`
		StartRequestFields []string `json:"start_request_fields"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("kinds158.py output: %v\n%s", err, out)
	}
	if len(ref.Kinds) < 100 || len(ref.StartRequestFields) < 20 {
		t.Fatalf("kinds158.py found %d kinds and %d fields: too few, the reference's packages did not import", len(ref.Kinds), len(ref.StartRequestFields))
	}

	var b strings.Builder
	b.WriteString("# Every kind and start-request field of the reference 1.58.2 and its status in gohands.\n")
	b.WriteString("# Written by TestKindsAndFields158 (go test ./tests/pyclient -run KindsAndFields158 -update).\n")
	for _, k := range ref.Kinds {
		fmt.Fprintf(&b, "kind\t%s\t%s\t%s\n", k.Family, k.Name, kindStatus(k.Family, k.Name))
	}
	fields := startRequestStatus(t)
	for _, f := range ref.StartRequestFields {
		st, ok := fields[f]
		if !ok {
			st = "NOT READ: silently ignored"
		}
		fmt.Fprintf(&b, "field\tStartConversationRequest\t%s\t%s\n", f, st)
	}
	got := b.String()

	path := filepath.Join("testdata", "kinds158.golden")
	if golden.Update() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run KindsAndFields158 -update writes it)", err)
	}
	compareKinds(t, path, string(want), got)
	for line := range strings.Lines(got) {
		if strings.Contains(line, "NOT READ") || strings.Contains(line, "lost") {
			t.Errorf("silently dropped: %s", strings.TrimSpace(line))
		}
	}
}

// compareKinds reports each kind or field of got (lines "what, family,
// name, status") that the golden want does not list, or lists no more, or
// whose status got worse. A kind that became typed (a tool or kind that
// other work registers meanwhile) is only logged: -update records it.
func compareKinds(t *testing.T, path, want, got string) {
	t.Helper()
	parse := func(s string) map[string]string {
		m := make(map[string]string)
		for line := range strings.Lines(s) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.SplitN(strings.TrimRight(line, "\n"), "\t", 4)
			if len(f) == 4 {
				m[f[0]+" "+f[1]+" "+f[2]] = f[3]
			}
		}
		return m
	}
	w, g := parse(want), parse(got)
	for _, k := range slices.Sorted(maps.Keys(g)) {
		ws, ok := w[k]
		switch {
		case !ok:
			t.Errorf("%s does not list %s (now %q): go test -run KindsAndFields158 -update", path, k, g[k])
		case ws == g[k]:
		case strings.HasPrefix(g[k], "typed") && !strings.HasPrefix(ws, "typed"):
			t.Logf("%s: %s is now %q (was %q): -update records it", path, k, g[k], ws)
		default:
			t.Errorf("%s: %s is %q, the golden says %q", path, k, g[k], ws)
		}
	}
	for k := range w {
		if _, ok := g[k]; !ok {
			t.Errorf("%s lists %s, which 1.58.2 does not have", path, k)
		}
	}
}

// kindStatus measures what gohands does with an object of the reference
// kind name of family.
func kindStatus(family, name string) string {
	if slices.Contains(wire.Kinds(), name) {
		return "typed"
	}
	switch family {
	case "tool":
		// A ToolDefinition is written in a SystemPromptEvent, which
		// keeps it as read; a start request names the tool to run.
		reg := tool.Registered()
		if slices.Contains(reg, name) || slices.Contains(reg, tool.NameFromKind(name)) {
			return "typed (registered tool)"
		}
		return "no such tool: kept as read in a system prompt; a start request naming it answers 422"
	case "critic":
		// The agent keeps its critic as JSON and runs it by kind.
		return "kept as JSON in the agent; run by kind at the finish (agent/critic.go)"
	}
	probe := map[string]any{"kind": name, "probe_field": 1}
	if family == "event" {
		probe["id"] = "00000000-0000-4000-8000-000000000001"
		probe["timestamp"] = "2026-11-28T00:00:00"
		probe["source"] = "environment"
	}
	data, err := json.Marshal(probe)
	if err != nil {
		return "probe: " + err.Error()
	}
	var v any
	switch family {
	case "event":
		v, err = event.DecodeKinded[event.Event](data)
	case "observation":
		v, err = event.DecodeKinded[event.Observation](data)
	case "security_analyzer":
		v, err = event.DecodeKinded[security.Analyzer](data)
	case "confirmation_policy":
		v, err = event.DecodeKinded[security.ConfirmationPolicy](data)
	case "condenser":
		v, err = event.DecodeKinded[condenser.Condenser](data)
	default: // actions, agents, workspaces, secrets: kinded slots of any type
		v, err = event.DecodeKinded[any](data)
	}
	if err != nil {
		if strings.Contains(err.Error(), name) {
			return "refused with an error naming it"
		}
		return "refused: " + err.Error()
	}
	if !event.IsUnknownKind(v) {
		return fmt.Sprintf("read as %T", v)
	}
	back, err := event.MarshalKinded(v)
	if err != nil {
		return "kept as unknown, not written back: " + err.Error()
	}
	var again map[string]any
	if json.Unmarshal(back, &again) != nil || !reflect.DeepEqual(normalize(probe), again) {
		return "kept as unknown, changed when written back (lost)"
	}
	return "kept as unknown, round-tripped"
}

// wildcard reports whether item names field with a pattern such as
// "the observability_* fields".
func wildcard(item, field string) bool {
	for w := range strings.FieldsSeq(item) {
		if p, ok := strings.CutSuffix(w, "*"); ok && p != "" && strings.HasPrefix(field, p) {
			return true
		}
	}
	return false
}

func normalize(m map[string]any) map[string]any {
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// startRequestStatus returns, for each field gohands' start request reads
// (api/protocol.StartRequest), its status in the list of server/doc.go.
func startRequestStatus(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "server", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The list's items: "//   - <text>" continued by "//     <text>".
	start := bytes.Index(doc, []byte("StartConversationRequest. Their status here:"))
	if start < 0 {
		t.Fatal("server/doc.go no longer has the start request's status list")
	}
	var items []string
	for line := range strings.Lines(string(doc[start:])) {
		line = strings.TrimPrefix(strings.TrimRight(line, "\n"), "//")
		switch {
		case strings.HasPrefix(line, "   - "):
			items = append(items, strings.TrimPrefix(line, "   - "))
		case strings.HasPrefix(line, "     ") && len(items) > 0:
			items[len(items)-1] += " " + strings.TrimSpace(line)
		case len(items) > 0:
			goto done
		}
	}
done:
	status := make(map[string]string)
	typ := reflect.TypeFor[protocol.StartRequest]()
	for field := range typ.Fields() {
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		st := "read, not in server/doc.go's status list"
		word := regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(name) + `($|[^a-z_])`)
		for _, it := range items {
			head, _, _ := strings.Cut(it, ":")
			if !word.MatchString(it) && !wildcard(it, name) {
				continue
			}
			switch {
			case strings.HasPrefix(it, "implemented:"):
				st = "implemented"
			case strings.HasPrefix(it, "accepted at their defaults only"):
				st = "accepted at its default only, otherwise 422 naming it"
			case word.MatchString(head):
				st = "implemented (server/doc.go says how)"
				if _, text, _ := strings.Cut(it, ": "); strings.HasPrefix(text, "stored and returned") {
					st = "stored and returned"
				}
			}
			break
		}
		status[name] = st
	}
	return status
}
