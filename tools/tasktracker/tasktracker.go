// Package tasktracker provides the task_tracker tool: the model's own to-do
// list for long tasks. "plan" replaces the whole list, "view" shows it.
//
// With a conversation directory the list is kept in
// <dir>/TASKS.json, in the reference's format (a JSON array of
// {"title","notes","status"}, indented by two spaces, non-ASCII escaped),
// so the list survives restarts and is shared with the Python reference.
// Without one it lives in memory for the life of the tool.
//
// The tool is registered as "task_tracker" (kinds TaskTrackerTool,
// TaskTrackerAction, TaskTrackerObservation, as in the reference).
//
// Differences from the reference, on purpose: "view" reads the file each
// time, so two tools on one directory agree; an unreadable TASKS.json is
// an error observation (the reference silently starts with an empty
// list, and the next plan overwrites the file); a failed save is reported
// and leaves the list unchanged, rather than only being logged; the file
// is replaced atomically; a task needs a non-empty title.
package tasktracker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name, and its registry name.
const Name = "task_tracker"

// FileName is the file the list is kept in, in the conversation directory.
const FileName = "TASKS.json"

// Commands.
const (
	CommandView = "view"
	CommandPlan = "plan"
)

// Task statuses.
const (
	StatusTodo       = "todo"
	StatusInProgress = "in_progress"
	StatusDone       = "done"
)

// TaskItem is one task.
type TaskItem struct {
	Title  string `json:"title" desc:"Short, specific title of the task."`
	Notes  string `json:"notes" default:"" desc:"Details: what done means, findings, blockers."`
	Status string `json:"status" default:"todo" enum:"todo,in_progress,done" desc:"todo, in_progress (at most one task at a time) or done."`
}

// Action views or replaces the task list.
type Action struct {
	Command  string               `json:"command" default:"view" enum:"view,plan" desc:"\"view\" shows the list; \"plan\" replaces it with task_list."`
	TaskList event.List[TaskItem] `json:"task_list" default:"[]" desc:"For \"plan\": the complete new list, in order, including tasks already done."`
}

// Observation is the task list after the command.
type Observation struct {
	event.ObservationBase
	// Command is the command that ran.
	Command string `json:"command"`
	// TaskList is the current list.
	TaskList event.List[TaskItem] `json:"task_list"`
}

func init() {
	event.RegisterKind[Action]("TaskTrackerAction")
	event.RegisterKind[Observation]("TaskTrackerObservation")
	tool.Register(Name, factory)
}

// factory makes the tool for a conversation; the spec takes no params.
func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range m {
		return nil, fmt.Errorf("unknown param %q: the tool takes no params", k)
	}
	return []tool.Tool{New(&Options{Dir: ctx.ConversationDir})}, nil
}

// Options configures New. A nil *Options keeps the list in memory.
type Options struct {
	// Dir is the directory TASKS.json is kept in; "" keeps the list in
	// memory only. The directory is created on the first plan.
	Dir string
}

const description = `Keep a task list for multi-step work, so that progress stays visible and nothing is forgotten.
* "view" shows the list; "plan" replaces the whole list with task_list (send every task, done ones included).
* Each task has a title, optional notes, and a status: todo, in_progress or done.
* Plan at the start of a multi-step task, mark one task in_progress before working on it, and mark it done as soon as it is finished.
* Skip it for simple tasks that take a step or two.`

// New returns the task_tracker tool.
func New(opts *Options) *tool.Typed[Action, *Observation] {
	tr := &tracker{}
	if opts != nil {
		tr.dir = opts.Dir
	}
	return tool.New(Name, description, tr.run, &tool.Options{
		Kind: "TaskTrackerTool",
		Annotations: &event.ToolAnnotations{
			IdempotentHint: true,
		},
	})
}

// tracker holds the list; with a directory the file is the source of
// truth and tasks is only used without one.
type tracker struct {
	mu    sync.Mutex
	dir   string
	tasks []TaskItem
}

func (tr *tracker) run(_ context.Context, a *Action) (*Observation, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cmd := a.Command
	if cmd == "" {
		cmd = CommandView
	}
	obs := &Observation{Command: cmd}
	reply := func(isError bool, format string, args ...any) (*Observation, error) {
		obs.IsError = isError
		obs.Content = event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}
		return obs, nil
	}
	switch cmd {
	case CommandView:
		tasks, err := tr.load()
		if err != nil {
			return reply(true, "%v", err)
		}
		obs.TaskList = tasks
		return reply(false, "%s", Render(tasks))
	case CommandPlan:
		tasks := make([]TaskItem, len(a.TaskList))
		for i, t := range a.TaskList {
			if err := t.normalize(); err != nil {
				return reply(true, "task_list[%d].%v; the task list was not changed", i, err)
			}
			tasks[i] = t
		}
		if err := tr.save(tasks); err != nil {
			return reply(true, "The task list could not be saved, so it was not changed: %v", err)
		}
		obs.TaskList = tasks
		return reply(false, "Task list updated: %s.", summary(tasks))
	default:
		return reply(true, "unknown command %q: use \"view\" or \"plan\"", cmd)
	}
}

// normalize fills in defaults and checks the fields. Its errors start with
// the field name.
func (t *TaskItem) normalize() error {
	if strings.TrimSpace(t.Title) == "" {
		return errors.New("title must not be empty")
	}
	switch t.Status {
	case "":
		t.Status = StatusTodo
	case StatusTodo, StatusInProgress, StatusDone:
	default:
		return fmt.Errorf("status must be one of todo, in_progress, done; got %q", t.Status)
	}
	return nil
}

// path is the list's file, or "" without a directory.
func (tr *tracker) path() string {
	if tr.dir == "" {
		return ""
	}
	return filepath.Join(tr.dir, FileName)
}

// load returns the current list.
func (tr *tracker) load() ([]TaskItem, error) {
	p := tr.path()
	if p == "" {
		return tr.tasks, nil
	}
	tasks, err := ReadFile(p)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tr.tasks, nil
	case errors.As(err, &pe):
		return nil, fmt.Errorf("cannot read the task list: %w", err)
	}
	return tasks, err
}

// save stores tasks. Without a directory it only keeps them in memory.
func (tr *tracker) save(tasks []TaskItem) error {
	p := tr.path()
	if p == "" {
		tr.tasks = tasks
		return nil
	}
	if err := WriteFile(p, tasks); err != nil {
		return err
	}
	tr.tasks = tasks
	return nil
}

// ReadFile reads a task list written by WriteFile or by the reference.
// Missing notes and status take their defaults; an invalid file is an
// error naming the file and the problem.
func ReadFile(path string) ([]TaskItem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tasks []TaskItem
	if err := json.Unmarshal(data, &tasks); err != nil {
		return nil, fmt.Errorf("cannot read the task list in %s: %w", path, err)
	}
	for i := range tasks {
		if err := tasks[i].normalize(); err != nil {
			return nil, fmt.Errorf("cannot read the task list in %s: task %d: %w", path, i+1, err)
		}
	}
	return tasks, nil
}

// WriteFile stores tasks at path exactly as the reference writes
// TASKS.json, replacing the file atomically. The directory is created if
// needed.
func WriteFile(path string, tasks []TaskItem) error {
	if tasks == nil {
		tasks = []TaskItem{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tasks); err != nil {
		return err
	}
	data := asciiJSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// asciiJSON escapes every non-ASCII character of JSON text as \uXXXX
// (UTF-16 surrogate pairs beyond the BMP), as Python's json.dump does by
// default. Non-ASCII bytes only occur inside strings, so this is safe.
func asciiJSON(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		data = data[size:]
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// Render is the task list as the model reads it on "view": a numbered
// checklist, [x] done, [~] in progress, [ ] to do, notes indented below.
func Render(tasks []TaskItem) string {
	if len(tasks) == 0 {
		return `The task list is empty. Use the "plan" command to create one.`
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task list (%s):", summary(tasks))
	for i, t := range tasks {
		mark := "[ ]"
		switch t.Status {
		case StatusDone:
			mark = "[x]"
		case StatusInProgress:
			mark = "[~]"
		}
		fmt.Fprintf(&b, "\n%d. %s %s", i+1, mark, t.Title)
		if t.Notes != "" {
			pad := strings.Repeat(" ", len(fmt.Sprint(i+1))+6)
			b.WriteString("\n" + pad + strings.ReplaceAll(t.Notes, "\n", "\n"+pad))
		}
	}
	return b.String()
}

// summary counts tasks by status: "3 tasks: 1 done, 1 in progress, 1 to do".
func summary(tasks []TaskItem) string {
	var done, doing, todo int
	for _, t := range tasks {
		switch t.Status {
		case StatusDone:
			done++
		case StatusInProgress:
			doing++
		default:
			todo++
		}
	}
	noun := "tasks"
	if len(tasks) == 1 {
		noun = "task"
	}
	if len(tasks) == 0 {
		return "no tasks"
	}
	return fmt.Sprintf("%d %s: %d done, %d in progress, %d to do", len(tasks), noun, done, doing, todo)
}
