package gemini

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// MaxEntries is the most entries list_directory returns.
const MaxEntries = 500

// ListDirectoryAction lists a directory.
type ListDirectoryAction struct {
	DirPath   string `json:"dir_path" default:"." desc:"Directory to list, absolute or relative to the working directory. Default: the working directory."`
	Recursive bool   `json:"recursive" default:"false" desc:"Also list the contents of subdirectories (two levels in all)."`
}

// FileEntry is one file or directory listed.
type FileEntry struct {
	Name         string    `json:"name"`
	Path         string    `json:"path"`
	IsDirectory  bool      `json:"is_directory"`
	Size         int64     `json:"size"`
	ModifiedTime LocalTime `json:"modified_time"`
}

// LocalTime is a time encoded as Python encodes a naive local datetime:
// "2006-01-02T15:04:05" with microseconds when there are any.
type LocalTime struct{ time.Time }

const (
	pyTime      = "2006-01-02T15:04:05"
	pyTimeMicro = "2006-01-02T15:04:05.000000"
)

// MarshalJSON implements json.Marshaler.
func (t LocalTime) MarshalJSON() ([]byte, error) {
	lt := t.Local().Truncate(time.Microsecond)
	layout := pyTime
	if lt.Nanosecond() != 0 {
		layout = pyTimeMicro
	}
	return []byte(`"` + lt.Format(layout) + `"`), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *LocalTime) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	v, err := time.ParseInLocation("2006-01-02T15:04:05.999999", s, time.Local)
	if err != nil {
		return fmt.Errorf("modified_time: %w", err)
	}
	t.Time = v
	return nil
}

// ListDirectoryObservation lists a directory's entries, directories
// before files at each level, each group by name.
type ListDirectoryObservation struct {
	event.ObservationBase
	DirPath     *string               `json:"dir_path"`
	Entries     event.List[FileEntry] `json:"entries"`
	TotalCount  int                   `json:"total_count"`
	IsTruncated bool                  `json:"is_truncated"`
}

const listDescription = `List a directory's files and subdirectories with their size and modification time, hidden ones included. With recursive, the subdirectories' contents are listed too (two levels in all). At most 500 entries are returned.`

// NewListDirectory returns the list_directory tool for the working
// directory wd.
func NewListDirectory(wd string) *tool.Typed[ListDirectoryAction, *ListDirectoryObservation] {
	desc := listDescription + "\n\nThe working directory is " + wd + "; relative paths are resolved from it."
	return tool.New(ListDirectoryName, desc, func(ctx context.Context, a *ListDirectoryAction) (*ListDirectoryObservation, error) {
		return listDirectory(ctx, wd, a), nil
	}, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: ListDirectoryName, ReadOnlyHint: true, IdempotentHint: true},
	})
}

func listDirectory(ctx context.Context, wd string, a *ListDirectoryAction) *ListDirectoryObservation {
	path := join(wd, a.DirPath)
	fail := func(format string, args ...any) *ListDirectoryObservation {
		return &ListDirectoryObservation{ObservationBase: event.ObservationBase{Content: textContent(fmt.Sprintf(format, args...)), IsError: true}}
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("Error: Directory not found: %s", path)
	case err != nil:
		return fail("Error listing directory: %v", err)
	case !fi.IsDir():
		return fail("Error: Path is not a directory: %s", path)
	}
	var entries []FileEntry
	if a.Recursive {
		// Two levels: the directory and its subdirectories.
		level := []string{path}
		for depth := 0; depth < 2 && len(entries) < MaxEntries && ctx.Err() == nil; depth++ {
			var next []string
			for _, dir := range level {
				dirs, files, err := readDir(dir)
				if err != nil {
					if dir == path {
						return ioFail(fail, err, path)
					}
					continue
				}
				entries = append(entries, dirs...)
				entries = append(entries, files...)
				for _, d := range dirs {
					next = append(next, d.Path)
				}
				if len(entries) >= MaxEntries {
					break
				}
			}
			level = next
		}
	} else {
		names, err := os.ReadDir(path)
		if err != nil {
			return ioFail(fail, err, path)
		}
		for _, n := range names {
			if e, ok := entry(path, n.Name()); ok {
				entries = append(entries, e)
				if len(entries) >= MaxEntries {
					break
				}
			}
		}
	}
	total := len(entries)
	truncated := total >= MaxEntries
	text := fmt.Sprintf("Listed directory: %s (%d entries", path, total)
	if truncated {
		text += fmt.Sprintf(", truncated to %d", MaxEntries)
	}
	text += ")"
	return &ListDirectoryObservation{
		ObservationBase: event.ObservationBase{Content: textContent(text)},
		DirPath:         new(path), Entries: entries[:min(total, MaxEntries)], TotalCount: total, IsTruncated: truncated,
	}
}

func ioFail(fail func(string, ...any) *ListDirectoryObservation, err error, path string) *ListDirectoryObservation {
	if errors.Is(err, fs.ErrPermission) {
		return fail("Error: Permission denied: %s", path)
	}
	return fail("Error listing directory: %v", err)
}

// readDir returns a directory's subdirectories and files, each sorted by
// name. Links count as what they point to.
func readDir(dir string) (dirs, files []FileEntry, err error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		e, ok := entry(dir, n.Name())
		if !ok {
			continue
		}
		if e.IsDirectory {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	byName := func(a, b FileEntry) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(dirs, byName)
	slices.SortFunc(files, byName)
	return dirs, files, nil
}

// entry describes dir/name, following links; a broken link is left out.
func entry(dir, name string) (FileEntry, bool) {
	p := dir + "/" + name
	fi, err := os.Stat(p)
	if err != nil {
		return FileEntry{}, false
	}
	e := FileEntry{Name: name, Path: p, IsDirectory: fi.IsDir(), ModifiedTime: LocalTime{fi.ModTime()}}
	if !e.IsDirectory {
		e.Size = fi.Size()
	}
	return e, true
}
