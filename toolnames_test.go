package gohands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gohands/gohands/tool"
	_ "github.com/gohands/gohands/tools/preset" // registers every built-in tool
)

// neutral are the packages that show or handle any tool's calls: a tool
// declares its aliases and repairs (tool.Repairer) and its presentation
// (tool.ActionPresenter, tool.ObservationPresenter), and these packages
// name no tool.
var neutral = []string{"tool", "conversation/visualizer", "cmd/gohands/internal/tui"}

// TestNeutralPackagesNameNoTool fails when a non-test file of a neutral
// package holds a string literal that is a built-in tool's name or the
// kind of its action, observation or definition ("terminal",
// "TerminalAction"), or imports a tool (the import rules cover tool and the
// visualizer; the TUI is checked here).
func TestNeutralPackagesNameNoTool(t *testing.T) {
	names := map[string]string{}
	for _, n := range tool.Registered() {
		var camel strings.Builder
		for w := range strings.SplitSeq(n, "_") {
			if w != "" {
				camel.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
		names[n] = n
		for _, suffix := range []string{"Action", "Observation", "Tool"} {
			names[camel.String()+suffix] = n
		}
	}
	if len(names) < 4*8 {
		t.Fatalf("%d names from the registry: are the built-in tools registered?", len(names))
	}
	fset := token.NewFileSet()
	for _, pkg := range neutral {
		files, err := filepath.Glob(filepath.Join(filepath.FromSlash(pkg), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", pkg, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range f.Imports {
				ip, _ := strconv.Unquote(is.Path.Value)
				if rel, ok := strings.CutPrefix(ip, module+"/"); ok && (strings.HasPrefix(rel, "tools/") || rel == "agent" || strings.HasPrefix(rel, "agent/")) {
					t.Errorf("%s: imports %s: a neutral package names no tool", fset.Position(is.Pos()), ip)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				if name, ok := names[s]; ok {
					t.Errorf("%s: %s names the tool %s: declare it through the tool (tool.Repairer, tool.ActionPresenter, tool.ObservationPresenter)", fset.Position(lit.Pos()), lit.Value, name)
				}
				return true
			})
		}
	}
}
