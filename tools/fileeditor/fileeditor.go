// Package fileeditor is the file_editor tool: the model views files and
// directories, creates files, and edits them by exact string replacement
// and line insertion, with undo.
//
// Edits keep what the model cannot see: a file's encoding (UTF-8, UTF-8
// with a byte order mark, or Latin-1 for text that is not valid UTF-8), its
// line endings (a CRLF file stays CRLF; old_str and new_str may use either
// "\n" or "\r\n"), a missing final newline, and its permission bits. Writes
// are atomic and go through symlinks to their targets. Binary files and
// files over 10 MB are refused with a message saying so.
//
// The tool speaks the reference's wire format: actions of kind
// FileEditorAction, observations of kind FileEditorObservation, registry
// name "file_editor", and its messages are the reference's where the
// behaviour is the same (testdata/reference_behaviour.json is replayed in
// the tests). Where the reference (openhands-tools 1.43.1) loses data or
// misleads the model, this package differs on purpose:
//
//   - CRLF files stay CRLF (the reference rewrites them with "\n").
//   - Latin-1 files are edited byte for byte; a character Latin-1 cannot
//     hold is refused rather than transcoding the whole file to UTF-8.
//   - Editing through a symlink edits its target (the reference replaces
//     the link with a regular file). New files get 0666 less the umask,
//     not 0600. A file that cannot be renamed over (a bind mount) is
//     written in place rather than not at all.
//   - insert after the last line of a file without a final newline starts
//     a new line (the reference glues the text onto the last line), and a
//     final newline in new_str does not add an empty line.
//   - Views do not number an empty line past the final newline, and cut
//     long output at line boundaries keeping true line numbers.
//   - old_str matching is reported ambiguous when occurrences overlap, and
//     an empty old_str is refused.
//   - create records no undo step (the reference's undo after create
//     rewrites the same content). Images obey the size limit.
package fileeditor

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name and registry key.
const Name = "file_editor"

// Commands of the tool.
const (
	CommandView       = "view"
	CommandCreate     = "create"
	CommandStrReplace = "str_replace"
	CommandInsert     = "insert"
	CommandUndoEdit   = "undo_edit"
)

// Commands lists the commands in the order the schema gives them.
var Commands = []string{CommandView, CommandCreate, CommandStrReplace, CommandInsert, CommandUndoEdit}

// Action is one call of the tool (kind FileEditorAction). Which optional
// fields a command needs is checked when it runs, and a missing one is
// reported to the model.
type Action struct {
	Command    string  `json:"command" enum:"view,create,str_replace,insert,undo_edit" desc:"The command to run: view, create, str_replace, insert or undo_edit."`
	Path       string  `json:"path" desc:"Absolute path of the file or directory, e.g. /workspace/main.go."`
	FileText   *string `json:"file_text,omitempty" desc:"For create (required): the content of the new file."`
	OldStr     *string `json:"old_str,omitempty" desc:"For str_replace (required): the exact text to replace. It must occur exactly once in the file."`
	NewStr     *string `json:"new_str,omitempty" desc:"For str_replace (required; empty to delete old_str): the replacement text. For insert (required): the lines to insert."`
	InsertLine *int    `json:"insert_line,omitempty" desc:"For insert (required): new_str goes after this line; 0 inserts at the top of the file."`
	ViewRange  []int   `json:"view_range,omitempty" desc:"For view of a file (optional): [start, end] line numbers, 1-based and inclusive; end -1 means to the end of the file."`
}

// Observation is the result of an action (kind FileEditorObservation).
// OldContent and NewContent are the file's text before and after an edit,
// for showing a diff; the model does not see them.
type Observation struct {
	event.ObservationBase
	// Command is the command that ran.
	Command string `json:"command"`
	// Path is the file or directory the action named.
	Path *string `json:"path,omitempty"`
	// PrevExist is false only when create made a new file.
	PrevExist bool `json:"prev_exist"`
	// OldContent is the file's text before an edit.
	OldContent *string `json:"old_content,omitempty"`
	// NewContent is the file's text after an edit or create.
	NewContent *string `json:"new_content,omitempty"`
}

// SetDefaults implements event.Defaulter: prev_exist is true when absent,
// as in the reference.
func (o *Observation) SetDefaults() { o.PrevExist = true }

var _ event.Defaulter = (*Observation)(nil)

func init() {
	event.RegisterKind[Action]("FileEditorAction")
	event.RegisterKind[Observation]("FileEditorObservation")
	tool.Register(Name, factory)
}

// Annotations are the tool's hints, as the reference declares them.
func Annotations() *event.ToolAnnotations {
	return &event.ToolAnnotations{
		Title:           Name,
		ReadOnlyHint:    false,
		DestructiveHint: true,
		IdempotentHint:  false,
		OpenWorldHint:   false,
	}
}

// New returns the file_editor tool backed by a new Editor configured by
// opts. Closing the tool deletes the Editor's undo history.
func New(opts *Options) *tool.Typed[Action, *Observation] {
	ed := NewEditor(opts)
	return tool.New(Name, description(ed.workingDir), ed.Execute, &tool.Options{
		Annotations: Annotations(),
		Kind:        "FileEditorTool",
		Close:       ed.Close,
		Aliases:     aliases,
		Repair:      repair,
	})
}

// factory makes the tool for a spec; it takes no parameters.
func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p struct{}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s takes no parameters: %w", Name, err)
	}
	return []tool.Tool{New(&Options{WorkingDir: ctx.WorkingDir})}, nil
}

func description(workingDir string) string {
	return `View, create and edit plain-text files.
* view: shows a file with line numbers, like ` + "`cat -n`" + `; view_range limits it to some lines. On a directory, lists its files and subdirectories two levels deep, hidden ones left out. Images (.png, .jpg, .jpeg, .gif, .webp, .bmp) are shown as images.
* create: writes a new file. It never overwrites an existing file, and the parent directory must exist.
* str_replace: replaces old_str with new_str. old_str must match exactly one place in the file, character for character, whitespace and indentation included: take a few lines around the change to make it unique. new_str must differ from old_str.
* insert: inserts new_str after line insert_line.
* undo_edit: reverts the last edit of the file (up to 10 steps back).
Paths are absolute. Long output is cut in the middle and marked <response clipped>. Binary files and files over 10 MB are refused. Encoding, line endings and a missing final newline are kept.
Look at a file before editing it, and keep the code working after each edit. Several edits to one file can go in one message as several calls.

Your working directory is ` + workingDir + `; start exploring there rather than at /.`
}

// ResourceKeys returns the keys of what a runs on, for an executor that
// runs tool calls in parallel: the reference's "file:<resolved path>", the
// same for every name of one file, so calls on one file run one at a time
// and calls on different files in parallel. The Editor locks files itself
// as well; the keys let a scheduler avoid blocking a worker on that lock.
func ResourceKeys(a *Action) []string {
	return []string{"file:" + resolve(a.Path)}
}
