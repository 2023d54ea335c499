package gemini

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// MaxLinesPerRead is how many lines read_file shows without a limit.
const MaxLinesPerRead = 1000

// ReadFileAction reads a file, or part of it.
type ReadFileAction struct {
	FilePath string `json:"file_path" desc:"Path of the file, absolute or relative to the working directory."`
	Offset   *int   `json:"offset" desc:"Optional 0-based line to start at, for reading a large file in pages."`
	Limit    *int   `json:"limit" desc:"Optional maximum number of lines to show (default 1000)."`
}

// ReadFileObservation is what was read. FileContent holds the numbered
// lines shown; LinesShown is the 1-based range shown when the file was
// cut.
type ReadFileObservation struct {
	event.ObservationBase
	FilePath    string  `json:"file_path"`
	FileContent string  `json:"file_content"`
	IsTruncated bool    `json:"is_truncated"`
	LinesShown  *[2]int `json:"lines_shown"`
	TotalLines  *int    `json:"total_lines"`
}

const readDescription = `Read a text file and return its lines, each numbered. At most 1000 lines are shown at once; for a longer file the result says which lines it shows and how to read on with offset (the 0-based line to start at) and limit (how many lines).`

// NewReadFile returns the read_file tool for the working directory wd.
func NewReadFile(wd string) *tool.Typed[ReadFileAction, *ReadFileObservation] {
	desc := readDescription + "\n\nThe working directory is " + wd + "; paths may be absolute or relative to it."
	return tool.New(ReadFileName, desc, func(ctx context.Context, a *ReadFileAction) (*ReadFileObservation, error) {
		return readFile(wd, a), nil
	}, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: ReadFileName, ReadOnlyHint: true, IdempotentHint: true},
		Meta:        workspaceMeta(wd),
	})
}

func readFile(wd string, a *ReadFileAction) *ReadFileObservation {
	path := join(wd, a.FilePath)
	fail := func(format string, args ...any) *ReadFileObservation {
		return &ReadFileObservation{
			ObservationBase: event.ObservationBase{Content: textContent(fmt.Sprintf(format, args...)), IsError: true},
			FilePath:        path,
		}
	}
	offset := 0
	if a.Offset != nil {
		offset = *a.Offset
	}
	if offset < 0 {
		return fail("Error: offset must be 0 or more, got %d", offset)
	}
	if a.Limit != nil && *a.Limit < 1 {
		return fail("Error: limit must be 1 or more, got %d", *a.Limit)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("Error: File not found: %s", path)
	case err != nil:
		return fail("Error reading file: %v", err)
	case fi.IsDir():
		return fail("Error: Path is a directory, not a file: %s", path)
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fail("Error: Permission denied: %s", path)
	case err != nil:
		return fail("Error reading file: %v", err)
	}
	lines := splitLines(decodeText(data))
	total := len(lines)
	if offset >= total && !(offset == 0 && total == 0) {
		return fail("Error: Offset %d is beyond file length (%d lines)", offset, total)
	}
	limit := MaxLinesPerRead
	if a.Limit != nil {
		limit = *a.Limit
	}
	end := min(offset+limit, total)
	var b strings.Builder
	for i, l := range lines[offset:end] {
		fmt.Fprintf(&b, "%6d  %s", offset+i+1, l)
	}
	numbered := b.String()
	head := "Read file: " + path
	obs := &ReadFileObservation{FilePath: path, FileContent: numbered, TotalLines: new(total)}
	if end < total {
		obs.IsTruncated = true
		obs.LinesShown = &[2]int{offset + 1, end}
		head += fmt.Sprintf(" (showing lines %d-%d of %d) To read more, use: read_file(file_path='%s', offset=%d, limit=%d)",
			offset+1, end, total, a.FilePath, end, limit)
	}
	obs.Content = textContent(head + "\n\n" + numbered)
	return obs
}

// splitLines splits text after each "\n", as Python's readlines does.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
