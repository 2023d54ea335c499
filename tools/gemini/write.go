package gemini

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// WriteFileAction writes a whole file.
type WriteFileAction struct {
	FilePath string `json:"file_path" desc:"Path of the file, absolute or relative to the working directory. Missing parent directories are created."`
	Content  string `json:"content" desc:"The file's complete new content."`
}

// WriteFileObservation is the result of a write. OldContent is the file's
// text before (nil for a new file), for showing a diff.
type WriteFileObservation struct {
	event.ObservationBase
	FilePath   *string `json:"file_path"`
	IsNewFile  bool    `json:"is_new_file"`
	OldContent *string `json:"old_content"`
	NewContent *string `json:"new_content"`
}

const writeDescription = `Write a file's complete content: creates the file (and its parent directories) or replaces everything in it. For a small change to an existing file use edit instead.`

// NewWriteFile returns the write_file tool for the working directory wd.
func NewWriteFile(wd string) *tool.Typed[WriteFileAction, *WriteFileObservation] {
	desc := writeDescription + "\n\nThe working directory is " + wd + "; paths may be absolute or relative to it."
	return tool.New(WriteFileName, desc, func(ctx context.Context, a *WriteFileAction) (*WriteFileObservation, error) {
		return writeFileAction(wd, a), nil
	}, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: WriteFileName, DestructiveHint: true},
		Meta:        workspaceMeta(wd),
	})
}

func writeFileAction(wd string, a *WriteFileAction) *WriteFileObservation {
	path := join(wd, a.FilePath)
	fail := func(format string, args ...any) *WriteFileObservation {
		return &WriteFileObservation{ObservationBase: event.ObservationBase{Content: textContent(fmt.Sprintf(format, args...)), IsError: true}}
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return fail("Error: Path is a directory, not a file: %s", path)
	}
	isNew := errors.Is(err, fs.ErrNotExist)
	var old *string
	if !isNew {
		if data, err := os.ReadFile(path); err == nil {
			old = new(decodeText(data))
		}
	}
	if err := writeFile(path, []byte(a.Content)); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fail("Error: Permission denied: %s", path)
		}
		return fail("Error writing file: %v", err)
	}
	verb := "Updated"
	if isNew {
		verb = "Created"
	}
	return &WriteFileObservation{
		ObservationBase: event.ObservationBase{Content: textContent(verb + " file: " + path)},
		FilePath:        new(path), IsNewFile: isNew, OldContent: old, NewContent: new(a.Content),
	}
}
