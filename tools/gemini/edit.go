package gemini

import (
	"context"
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

// EditAction replaces text in a file, or creates a file when OldString is
// empty.
type EditAction struct {
	FilePath             string `json:"file_path" desc:"Path of the file, absolute or relative to the working directory."`
	OldString            string `json:"old_string" desc:"The exact text to replace, whitespace and indentation included. Empty to create a new file."`
	NewString            string `json:"new_string" desc:"The replacement text (the new file's content when old_string is empty)."`
	ExpectedReplacements int    `json:"expected_replacements" default:"1" desc:"How many times old_string occurs; the edit fails if the count differs. Default 1."`
}

// EditObservation is the result of an edit; OldContent and NewContent are
// the file's text before and after, for showing a diff.
type EditObservation struct {
	event.ObservationBase
	FilePath         *string `json:"file_path"`
	IsNewFile        bool    `json:"is_new_file"`
	ReplacementsMade int     `json:"replacements_made"`
	OldContent       *string `json:"old_content"`
	NewContent       *string `json:"new_content"`
}

const editDescription = `Replace text in a file. old_string must match the file exactly, whitespace and indentation included; give a few lines around the change so it is unique. By default it must occur once; set expected_replacements to replace every one of several occurrences. The edit fails, changing nothing, if the count differs or old_string equals new_string. With an empty old_string, creates a new file containing new_string. Read the file first to copy the text exactly; to rewrite most of a file use write_file.`

// NewEdit returns the edit tool for the working directory wd.
func NewEdit(wd string) *tool.Typed[EditAction, *EditObservation] {
	desc := editDescription + "\n\nThe working directory is " + wd + "; paths may be absolute or relative to it."
	return tool.New(EditName, desc, func(ctx context.Context, a *EditAction) (*EditObservation, error) {
		return edit(wd, a), nil
	}, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: EditName, DestructiveHint: true},
		Meta:        workspaceMeta(wd),
	})
}

// resolve follows the links of p and removes its ".." segments, as
// Python's Path.resolve does.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == "/" || dir == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

func edit(wd string, a *EditAction) *EditObservation {
	path := resolve(join(wd, a.FilePath))
	fail := func(withPath bool, format string, args ...any) *EditObservation {
		o := &EditObservation{ObservationBase: event.ObservationBase{Content: textContent(fmt.Sprintf(format, args...)), IsError: true}}
		if withPath {
			o.FilePath = new(path)
		}
		return o
	}
	ioErr := func(err error, what string) *EditObservation {
		if errors.Is(err, fs.ErrPermission) {
			return fail(false, "Error: Permission denied: %s", path)
		}
		return fail(false, "Error %s file: %v", what, err)
	}
	if a.ExpectedReplacements < 0 {
		return fail(false, "Error: expected_replacements must be 0 or more, got %d", a.ExpectedReplacements)
	}
	fi, statErr := os.Stat(path)
	if a.OldString == "" {
		if statErr == nil {
			return fail(false, "Error: Cannot create file that already exists: %s. Use write_file to overwrite or provide non-empty old_string.", path)
		}
		if err := writeFile(path, []byte(a.NewString)); err != nil {
			return ioErr(err, "creating")
		}
		return &EditObservation{
			ObservationBase: event.ObservationBase{Content: textContent("Created new file: " + path)},
			FilePath:        new(path), IsNewFile: true, ReplacementsMade: 1, NewContent: new(a.NewString),
		}
	}
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		return fail(false, "Error: File not found: %s. To create a new file, use old_string=''.", path)
	case statErr != nil:
		return ioErr(statErr, "editing")
	case fi.IsDir():
		return fail(false, "Error: Path is a directory, not a file: %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ioErr(err, "editing")
	}
	if !utf8.Valid(data) {
		return fail(true, "Error: %s is not UTF-8 text; edit only changes text files.", path)
	}
	crlf := strings.Contains(string(data), "\r\n")
	old := decodeText(data)
	if a.OldString == a.NewString {
		return fail(false, "Error: No changes to apply. old_string and new_string are identical.")
	}
	n := strings.Count(old, a.OldString)
	if n == 0 {
		return fail(true, "Error: Could not find the string to replace. 0 occurrences found in %s. Use read_file to verify the exact text.", path)
	}
	if n != a.ExpectedReplacements {
		word := "occurrences"
		if a.ExpectedReplacements == 1 {
			word = "occurrence"
		}
		return fail(true, "Error: Expected %d %s but found %d in %s.", a.ExpectedReplacements, word, n, path)
	}
	updated := strings.ReplaceAll(old, a.OldString, a.NewString)
	if updated == old {
		return fail(true, "Error: No changes made. The new content is identical to the current content.")
	}
	out := updated
	if crlf {
		out = strings.ReplaceAll(updated, "\n", "\r\n")
	}
	if err := writeFile(path, []byte(out)); err != nil {
		return ioErr(err, "editing")
	}
	return &EditObservation{
		ObservationBase: event.ObservationBase{Content: textContent(fmt.Sprintf("Successfully edited %s (%d replacement(s))", path, n))},
		FilePath:        new(path), ReplacementsMade: n, OldContent: new(old), NewContent: new(updated),
	}
}
