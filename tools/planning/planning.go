// Package planning is the planning_file_editor tool of the planning agent:
// file_editor that may view any file but edit only the plan, PLAN.md.
//
// The plan lives at <working dir>/.agents_tmp/PLAN.md unless a PLAN.md
// already sits at the working directory's root (the reference's legacy
// place) or the spec's plan_path param names another absolute path. The
// tool writes the plan's section headers there when the file is missing,
// so the model fills in a fixed structure (PlanHeaders).
//
// The tool speaks the reference's wire format: registry name
// "planning_file_editor", kinds PlanningFileEditorTool,
// PlanningFileEditorAction (the file_editor's arguments) and
// PlanningFileEditorObservation, and the reference's refusal message. As in
// the reference its observations carry no old or new content.
package planning

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/fileeditor"
)

// Name is the tool's name and registry key.
const Name = "planning_file_editor"

// Where the plan is kept by default, relative to the working directory.
const (
	DefaultDir   = ".agents_tmp"
	PlanFilename = "PLAN.md"
)

// Sections are the plan's sections, in order, each with what it holds;
// the planning agent's system prompt lists them (see Structure).
var Sections = []struct{ Title, Holds string }{
	{"OBJECTIVE", "The goal in one or two sentences, and the problem in operational terms."},
	{"CONTEXT SUMMARY", "The components, files and data involved, and the constraints that apply."},
	{"APPROACH OVERVIEW", "The chosen approach at a high level, and briefly why."},
	{"IMPLEMENTATION STEPS", "Numbered steps, each with its goal, how to do it, and the files or functions it touches."},
	{"TESTING AND VALIDATION", "How to verify the result: the outputs, behaviours or conditions that mean success."},
}

// PlanHeaders returns the content of a new PLAN.md: one "# N. TITLE"
// header per section.
func PlanHeaders() string {
	var parts []string
	for i, s := range Sections {
		parts = append(parts, fmt.Sprintf("# %d. %s\n", i+1, s.Title))
	}
	return strings.Join(parts, "\n")
}

// Structure describes the sections for a system prompt.
func Structure() string {
	var b strings.Builder
	b.WriteString("The plan must have exactly these sections, in this order:\n")
	for i, s := range Sections {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, s.Title, s.Holds)
	}
	return b.String()
}

// Action is a file_editor action (kind PlanningFileEditorAction).
type Action fileeditor.Action

// Observation is a file_editor observation (kind
// PlanningFileEditorObservation).
type Observation fileeditor.Observation

// SetDefaults implements event.Defaulter: prev_exist is true when absent.
func (o *Observation) SetDefaults() { o.PrevExist = true }

func init() {
	event.RegisterKind[Action]("PlanningFileEditorAction")
	event.RegisterKind[Observation]("PlanningFileEditorObservation")
	tool.Register(Name, factory)
}

// Options configures New.
type Options struct {
	// WorkingDir is the workspace. Empty means the process's directory.
	WorkingDir string
	// PlanPath is the absolute path of the plan; empty means the default
	// (see the package documentation).
	PlanPath string
}

// PlanPath returns where the plan of working directory wd is kept by
// default: wd/PLAN.md if that exists, else wd/.agents_tmp/PLAN.md.
func PlanPath(wd string) string {
	legacy := filepath.Join(wd, PlanFilename)
	if _, err := os.Stat(legacy); err == nil {
		return legacy
	}
	return filepath.Join(wd, DefaultDir, PlanFilename)
}

const description = `View any file or directory, and write the plan. The commands are file_editor's:
* view: a file with line numbers (view_range limits it), or a directory two levels deep.
* create, str_replace, insert, undo_edit: work on the plan file only; any other file is refused.
The plan file already holds the section headers; fill in each section with str_replace or insert.`

// New returns the tool, creating the plan file with its headers when it is
// missing. Closing the tool deletes the editor's undo history.
func New(opts *Options) (*tool.Typed[Action, *Observation], error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkingDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.WorkingDir = wd
	}
	wd, err := filepath.Abs(o.WorkingDir)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(wd); err == nil {
		wd = r
	}
	plan := o.PlanPath
	switch {
	case plan == "":
		plan = PlanPath(wd)
	case !filepath.IsAbs(plan):
		return nil, fmt.Errorf("plan_path must be an absolute path, got: %s", plan)
	}
	if _, err := os.Stat(plan); os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(plan), 0o755); err != nil {
			return nil, fmt.Errorf("planning: %w", err)
		}
		if err := os.WriteFile(plan, []byte(PlanHeaders()), 0o644); err != nil {
			return nil, fmt.Errorf("planning: %w", err)
		}
	}
	allowed := resolve(plan)
	ed := fileeditor.NewEditor(&fileeditor.Options{WorkingDir: wd})
	exec := func(ctx context.Context, a *Action) (*Observation, error) {
		if a.Command != fileeditor.CommandView {
			if p := resolve(a.Path); p != allowed {
				return &Observation{
					ObservationBase: event.ObservationBase{
						Content: event.List[event.Content]{event.Text(fmt.Sprintf(
							"Operation '%s' is not allowed on file '%s'. Only the following files can be edited: ['%s']", a.Command, p, allowed))},
						IsError: true,
					},
					Command: a.Command, PrevExist: true,
				}, nil
			}
		}
		fa := fileeditor.Action(*a)
		obs, err := ed.Execute(ctx, &fa)
		if err != nil {
			return nil, err
		}
		// As the reference, only the command, path and content are kept.
		return &Observation{ObservationBase: obs.ObservationBase, Command: obs.Command, Path: obs.Path, PrevExist: true}, nil
	}
	desc := description + "\n\nThe working directory is " + wd + ". The plan is " + plan + "; other agents of the workflow read it."
	return tool.New(Name, desc, exec, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: Name},
		Close:       ed.Close,
	}), nil
}

// resolve makes p absolute, with links and ".." resolved as far as the
// path exists.
func resolve(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	dir, base := filepath.Split(abs)
	if dir == "/" {
		return abs
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

// factory makes the tool for a spec; its one param is plan_path.
func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p struct {
		PlanPath *string `json:"plan_path"`
	}
	if err := strictDecode(params, &p); err != nil {
		return nil, err
	}
	o := &Options{WorkingDir: ctx.WorkingDir}
	if p.PlanPath != nil {
		o.PlanPath = *p.PlanPath
	}
	t, err := New(o)
	if err != nil {
		return nil, err
	}
	return []tool.Tool{t}, nil
}

func strictDecode(data json.RawMessage, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	for k := range m {
		if k != "plan_path" {
			return fmt.Errorf("unknown param %q: the tool takes plan_path only", k)
		}
	}
	return json.Unmarshal(data, v)
}
