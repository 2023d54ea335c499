// Package applypatch is the apply_patch tool: the model edits files by
// sending one patch in the "*** Begin Patch" format OpenAI's GPT-5 models
// are trained on. A patch adds, deletes and updates files; updates are hunks
// located by their context lines (and optional "@@ line" anchors), not by
// line numbers, and may move the file:
//
//	*** Begin Patch
//	*** Add File: docs/hello.txt
//	+Hello, world!
//	*** Update File: main.py
//	*** Move to: app.py
//	@@ def greet(name):
//	-    print("hello", name)
//	+    print(f"Hello, {name}!")
//	*** Delete File: old.txt
//	*** End Patch
//
// Paths are relative to the working directory (absolute paths must lie
// inside it). The tool speaks the reference's wire format (kinds
// ApplyPatchAction and ApplyPatchObservation, registry name "apply_patch"):
// the same hunk matching, fuzz count, commit summary and error messages;
// testdata/reference_behaviour.json, recorded from the reference, is
// replayed by the tests.
//
// Differences from the reference, on purpose: every path is checked before
// anything is written, so a patch whose last file is refused changes
// nothing (the reference writes the files before it); files with CRLF line
// endings are matched as if they had LF and keep CRLF when written (the
// reference rewrites them with LF); a file that is not UTF-8 is refused
// with a message rather than failing the tool; and the Responses API form
// carries the whole schema (the reference sends a minimal one there,
// relying on the provider's built-in definition).
package applypatch

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
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name and registry key.
const Name = "apply_patch"

// Action is one patch.
type Action struct {
	Patch string `json:"patch" desc:"The patch, from '*** Begin Patch' to '*** End Patch'."`
}

// FileChange is what a patch did to one file. OldContent and NewContent
// are the file's text before and after (nil for an added or deleted
// file); MovePath is where an updated file went ("" when it stayed).
type FileChange struct {
	Type       string  `json:"type"`
	OldContent *string `json:"old_content"`
	NewContent *string `json:"new_content"`
	MovePath   *string `json:"move_path"`
}

// Change is one file's change in a Commit.
type Change struct {
	Path string
	FileChange
}

// Commit lists the changes of a patch in the order the patch gives them.
type Commit struct {
	Changes Changes `json:"changes"`
}

// Changes encode as a JSON object keyed by path, in order.
type Changes []Change

// MarshalJSON implements json.Marshaler.
func (c Changes) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, ch := range c {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = event.AppendJSON(b, ch.Path); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = event.AppendJSON(b, ch.FileChange); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON implements json.Unmarshaler, keeping the keys' order.
func (c *Changes) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*c = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("changes: want an object, got %v", tok)
	}
	var out Changes
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var ch Change
		ch.Path, _ = tok.(string)
		if err := dec.Decode(&ch.FileChange); err != nil {
			return fmt.Errorf("changes[%q]: %w", ch.Path, err)
		}
		out = append(out, ch)
	}
	*c = out
	return nil
}

// Observation is the result of a patch. Message is "Done!" when it was
// applied; Fuzz counts how loosely its context matched (0: exactly).
type Observation struct {
	event.ObservationBase
	Message string  `json:"message"`
	Fuzz    int     `json:"fuzz"`
	Commit  *Commit `json:"commit"`
}

func init() {
	event.RegisterKind[Action]("ApplyPatchAction")
	event.RegisterKind[Observation]("ApplyPatchObservation")
	tool.Register(Name, factory)
}

const description = `Edit files by applying a patch. The patch starts with '*** Begin Patch' and ends with '*** End Patch'; between them come file sections:
* '*** Add File: PATH' followed by the new file's lines, each prefixed with '+'.
* '*** Delete File: PATH'.
* '*** Update File: PATH', optionally '*** Move to: NEW_PATH', then hunks. A hunk may start with '@@ LINE' naming a line above the change (a function or class header) to find the right place, or a bare '@@'. Its lines are prefixed with ' ' (unchanged context), '-' (removed) or '+' (added). Give about three lines of context above and below each change; there are no line numbers. '*** End of File' after a hunk anchors it at the end of the file.
Paths are relative to the working directory. Every change of one patch is checked before any file is written.`

// Annotations are the tool's hints, as the reference declares them.
func Annotations() *event.ToolAnnotations {
	return &event.ToolAnnotations{Title: Name, DestructiveHint: true}
}

// Options configures New.
type Options struct {
	// WorkingDir is the directory patch paths are relative to; no patch
	// may touch a file outside it. Empty means the process's directory.
	WorkingDir string
}

// New returns the apply_patch tool.
func New(opts *Options) (*tool.Typed[Action, *Observation], error) {
	dir := ""
	if opts != nil {
		dir = opts.WorkingDir
	}
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	e := &executor{root: root}
	return tool.New(Name, description, e.run, &tool.Options{Annotations: Annotations()}), nil
}

func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range p {
		return nil, fmt.Errorf("unknown param %q: the tool takes no params", k)
	}
	t, err := New(&Options{WorkingDir: ctx.WorkingDir})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{t}, nil
}

type executor struct {
	root string
}

// errEscape is the reference's message for a path outside the workspace.
var errEscape = &PatchError{Msg: "Absolute or escaping paths are not allowed"}

// resolve returns the file a patch path names, symbolic links of its
// existing part followed, refusing one outside the root.
func (e *executor) resolve(p string) (string, error) {
	var abs string
	if strings.HasPrefix(p, "/") {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(e.root, p)
	}
	// Follow the links of the longest existing ancestor.
	rest := ""
	cur := abs
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			abs = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	if abs != e.root && !strings.HasPrefix(abs, e.root+string(filepath.Separator)) {
		return "", errEscape
	}
	return abs, nil
}

// file is a file read for a patch.
type file struct {
	text string
	crlf bool
}

func (e *executor) read(p string) (file, error) {
	abs, err := e.resolve(p)
	if err != nil {
		return file{}, err
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// The reference's wording, whether the patch updates or deletes.
		return file{}, patchErr("Delete File Error: Missing File: %s", p)
	}
	if err != nil {
		return file{}, patchErr("Cannot read %s: %v", p, err)
	}
	if !utf8.Valid(data) {
		return file{}, patchErr("Cannot patch %s: it is not UTF-8 text", p)
	}
	text := string(data)
	crlf := strings.Contains(text, "\r\n")
	if crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	return file{text: text, crlf: crlf}, nil
}

// write is one file operation of a checked patch.
type write struct {
	abs     string
	content *string // nil: remove
}

func (e *executor) run(ctx context.Context, a *Action) (*Observation, error) {
	commit, fuzz, err := e.apply(a.Patch)
	if err != nil {
		var pe *PatchError
		if !errors.As(err, &pe) {
			return nil, err
		}
		return &Observation{ObservationBase: errorBase(pe.Msg)}, nil
	}
	const done = "Done!"
	return &Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(done)}},
		Message:         done, Fuzz: fuzz, Commit: commit,
	}, nil
}

func errorBase(msg string) event.ObservationBase {
	return event.ObservationBase{Content: event.List[event.Content]{event.Text(msg)}, IsError: true}
}

// apply parses the patch against the files it names, checks every path,
// then writes.
func (e *executor) apply(text string) (*Commit, int, error) {
	if !strings.HasPrefix(text, beginPatch) {
		return nil, 0, patchErr("Invalid patch: must start with '*** Begin Patch'")
	}
	files := make(map[string]file)
	texts := make(map[string]string)
	for _, p := range filesNeeded(text) {
		f, err := e.read(p)
		if err != nil {
			return nil, 0, err
		}
		files[p], texts[p] = f, f.text
	}
	ops, fuzz, err := parse(text, texts)
	if err != nil {
		return nil, 0, err
	}
	commit := &Commit{}
	var writes []write
	for _, op := range ops {
		var ch Change
		ch.Path = op.path
		ch.Type = op.op
		switch op.op {
		case OpDelete:
			old := files[op.path].text
			ch.OldContent = &old
			abs, err := e.resolve(op.path)
			if err != nil {
				return nil, 0, err
			}
			writes = append(writes, write{abs: abs})
		case OpAdd:
			content := op.newFile
			ch.NewContent = &content
			abs, err := e.resolve(op.path)
			if err != nil {
				return nil, 0, err
			}
			writes = append(writes, write{abs: abs, content: &content})
		case OpUpdate:
			f := files[op.path]
			newText, err := updated(f.text, op)
			if err != nil {
				return nil, 0, err
			}
			old, moved := f.text, op.moveTo
			ch.OldContent, ch.NewContent, ch.MovePath = &old, &newText, &moved
			content := newText
			if f.crlf {
				content = strings.ReplaceAll(newText, "\n", "\r\n")
			}
			dst := op.path
			if moved != "" {
				dst = moved
			}
			abs, err := e.resolve(dst)
			if err != nil {
				return nil, 0, err
			}
			writes = append(writes, write{abs: abs, content: &content})
			if moved != "" {
				src, err := e.resolve(op.path)
				if err != nil {
					return nil, 0, err
				}
				writes = append(writes, write{abs: src})
			}
		}
		commit.Changes = append(commit.Changes, ch)
	}
	for _, w := range writes {
		if err := w.do(); err != nil {
			return nil, 0, patchErr("%v", err)
		}
	}
	return commit, fuzz, nil
}

func (w write) do() error {
	if w.content == nil {
		return os.Remove(w.abs)
	}
	if err := os.MkdirAll(filepath.Dir(w.abs), 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(w.abs); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", w.abs)
		}
		mode = fi.Mode().Perm()
	}
	return os.WriteFile(w.abs, []byte(*w.content), mode)
}
