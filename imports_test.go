package gohands

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gohands/gohands"

// importRules are the import rules of doc/design.md ("Import rules"): a
// package matching from (a package path relative to the module, or a
// prefix ending in "/") must not import a package matching any of
// forbidden. Test files are not checked: a test may reach further.
var importRules = []struct {
	from      []string
	forbidden []string
	why       string
}{
	{
		from:      []string{""}, // every package
		forbidden: []string{"cmd/", "tests/", "bench/", "examples/"},
		why:       "applications and test programs are never imported",
	},
	{
		from:      sdk,
		forbidden: []string{"server", "server/", "eval", "eval/"},
		why:       "the SDK never imports an application (the agent server, the eval harness)",
	},
	{
		from: []string{"event", "tool", "tool/", "llm", "llm/", "conversation", "conversation/", "condenser",
			"security", "skill", "plugin", "hook", "secret", "workspace", "pubsub", "mcp"},
		forbidden: []string{"agent", "agent/", "tools/"},
		why:       "the core declares the interfaces agents and tools implement; it names none of them",
	},
	{
		from:      []string{"agent", "agent/"},
		forbidden: []string{"tools/"},
		why:       "an agent is given its tools; it does not pick concrete ones",
	},
	{
		from:      []string{"event", "internal/wire", "pubsub"},
		forbidden: []string{""}, // anything of the module but what is excepted below
		why:       "the wire format and the broker are the bottom layer",
	},
	{
		from: []string{"api/protocol"},
		forbidden: []string{"tool", "tool/", "llm", "llm/", "conversation", "conversation/", "condenser", "security",
			"skill", "hook", "secret", "workspace", "workspace/", "pubsub", "mcp", "mcp/", "agent", "agent/", "tools/",
			"server", "server/", "eval", "eval/", "telemetry", "telemetry/", "internal/"},
		why: "the REST protocol's bodies are types only: they name the event types and nothing above",
	},
	{
		from:      []string{"telemetry"},
		forbidden: []string{""},
		why:       "the instrumentation hooks are imported by the core, so they import nothing of it",
	},
	{
		from:      sdk,
		forbidden: []string{"telemetry/"},
		why:       "the SDK opens spans through telemetry's hooks; the exporters and their dependencies are the applications' choice",
	},
	{
		from:      []string{"internal/"},
		forbidden: []string{"agent", "agent/", "conversation", "conversation/", "tools/", "tool", "llm", "llm/"},
		why:       "internal helpers serve the SDK, not the other way round",
	},
}

// sdk is every package of the SDK proper (not an application).
var sdk = []string{"api/protocol", "event", "tool", "tool/", "llm", "llm/", "conversation", "conversation/", "condenser",
	"security", "skill", "plugin", "hook", "secret", "workspace", "workspace/", "pubsub", "mcp", "mcp/",
	"agent", "agent/acp", "tools/", "telemetry", "internal/wire", "internal/lazyregexp", "internal/termtext"}

// importExceptions are the imports a rule above forbids that exist
// today, each with the reason it stays.
var importExceptions = map[string]string{
	"event -> internal/wire": "the codec machinery behind event's API",
}

// appRoot returns the application a package belongs to ("cmd/gohands"),
// or "" for a package of the SDK: an application may import its own
// internal packages.
func appRoot(pkg string) string {
	parts := strings.SplitN(pkg, "/", 3)
	if len(parts) < 2 || !slices.Contains([]string{"cmd", "tests", "bench", "examples"}, parts[0]) {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

func matches(pkg string, patterns []string) bool {
	for _, p := range patterns {
		switch {
		case p == "":
			return true
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(pkg, p) {
				return true
			}
		case pkg == p:
			return true
		}
	}
	return false
}

// moduleImports returns, for each package of the module, the packages of
// the module its non-test files import, all relative to the module.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if pkg == "." {
			pkg = ""
		}
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			rel, ok := strings.CutPrefix(ip, module+"/")
			if !ok || slices.Contains(out[pkg], rel) {
				continue
			}
			out[pkg] = append(out[pkg], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportRules fails on an import that doc/design.md's rules forbid.
func TestImportRules(t *testing.T) {
	imports := moduleImports(t)
	if len(imports) < 20 {
		t.Fatalf("found imports of %d packages only; is the test run from the module root?", len(imports))
	}
	used := map[string]bool{}
	for pkg, imps := range imports {
		for _, imp := range imps {
			for _, r := range importRules {
				if pkg == "" || !matches(pkg, r.from) || !matches(imp, r.forbidden) {
					continue
				}
				if app := appRoot(pkg); app != "" && (imp == app || strings.HasPrefix(imp, app+"/")) {
					continue
				}
				edge := pkg + " -> " + imp
				if _, ok := importExceptions[edge]; ok {
					used[edge] = true
					continue
				}
				t.Errorf("%s imports %s: %s", path.Join(module, pkg), path.Join(module, imp), r.why)
			}
		}
	}
	for edge := range importExceptions {
		if !used[edge] {
			t.Errorf("the exception %q is no longer needed: remove it from importExceptions", edge)
		}
	}
}

// TestImportRulesCatch checks that the rules flag what they are for.
func TestImportRulesCatch(t *testing.T) {
	for _, tc := range []struct {
		pkg, imp string
		want     bool
	}{
		{"conversation", "agent", true},
		{"tool", "tools/terminal", true},
		{"agent", "server", true},
		{"tools/task", "cmd/gohands", true},
		{"event", "llm", true},
		{"llm/openai", "event", false},
		{"server", "agent", false},
		{"cmd/gohands", "server", false},
		{"agent", "tools/terminal", true},
		{"tools/preset", "tools/terminal", false},
		{"api/protocol", "conversation", true},
		{"api/protocol", "event", false},
		{"workspace", "api/protocol", false},
	} {
		got := false
		for _, r := range importRules {
			if matches(tc.pkg, r.from) && matches(tc.imp, r.forbidden) {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%s -> %s forbidden = %v, want %v", tc.pkg, tc.imp, got, tc.want)
		}
	}
}
