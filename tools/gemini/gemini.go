// Package gemini provides the gemini-style file tools, an alternative to
// file_editor shaped like gemini-cli's: read_file (numbered lines, paged
// with offset and limit), write_file (whole-file writes), edit (exact
// string replacement with an expected count) and list_directory.
//
// Paths may be absolute or relative to the working directory. The tools
// speak the reference's wire format (registry names read_file, write_file,
// edit, list_directory; kinds ReadFileAction/ReadFileObservation and so on)
// with the reference's messages; testdata/reference_behaviour.json,
// recorded from the reference (openhands-tools 1.43.1), is replayed by the
// tests.
//
// Differences from the reference, on purpose:
//   - read_file of an empty file shows it empty (the reference says offset
//     0 is beyond its length).
//   - edit keeps a CRLF file's line endings (the reference rewrites the
//     whole file with LF) and refuses a file that is not UTF-8 (the
//     reference replaces its bad bytes with U+FFFD and writes it back).
//   - list_directory -recursive visits subdirectories in name order (the
//     reference follows the order the file system returns them in).
//   - Writes go through a temporary file and a rename, keeping the file's
//     permission bits, so a failed write leaves the old content.
package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Names of the tools, which are also their registry names.
const (
	ReadFileName      = "read_file"
	WriteFileName     = "write_file"
	EditName          = "edit"
	ListDirectoryName = "list_directory"
)

// Names lists the four tools in the reference's order.
var Names = []string{ReadFileName, WriteFileName, EditName, ListDirectoryName}

func init() {
	event.RegisterKind[ReadFileAction]("ReadFileAction")
	event.RegisterKind[ReadFileObservation]("ReadFileObservation")
	event.RegisterKind[WriteFileAction]("WriteFileAction")
	event.RegisterKind[WriteFileObservation]("WriteFileObservation")
	event.RegisterKind[EditAction]("EditAction")
	event.RegisterKind[EditObservation]("EditObservation")
	event.RegisterKind[ListDirectoryAction]("ListDirectoryAction")
	event.RegisterKind[ListDirectoryObservation]("ListDirectoryObservation")
	for _, n := range Names {
		tool.Register(n, factory(n))
	}
}

// Options configures the tools. A nil *Options works in the process's
// directory.
type Options struct {
	// WorkingDir is the directory relative paths are resolved against.
	WorkingDir string
}

func workingDir(opts *Options) (string, error) {
	dir := ""
	if opts != nil {
		dir = opts.WorkingDir
	}
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// New returns the named tool.
func New(name string, opts *Options) (tool.Tool, error) {
	wd, err := workingDir(opts)
	if err != nil {
		return nil, err
	}
	switch name {
	case ReadFileName:
		return NewReadFile(wd), nil
	case WriteFileName:
		return NewWriteFile(wd), nil
	case EditName:
		return NewEdit(wd), nil
	case ListDirectoryName:
		return NewListDirectory(wd), nil
	}
	return nil, fmt.Errorf("gemini: no tool %q", name)
}

// All returns the four tools.
func All(opts *Options) ([]tool.Tool, error) {
	var out []tool.Tool
	for _, n := range Names {
		t, err := New(n, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func factory(name string) tool.Factory {
	return func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		for k := range p {
			return nil, fmt.Errorf("unknown param %q: the tool takes no params", k)
		}
		t, err := New(name, &Options{WorkingDir: ctx.WorkingDir})
		if err != nil {
			return nil, err
		}
		return []tool.Tool{t}, nil
	}
}

// join resolves p against dir as Python's pathlib does: "." and empty
// segments go, ".." stays (the kernel resolves it, through links).
func join(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = dir + "/" + p
	}
	var parts []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	return "/" + strings.Join(parts, "/")
}

// workspaceMeta is the definition metadata of the tools that take file
// paths, as in the reference.
func workspaceMeta(wd string) map[string]any { return map[string]any{"workspace_root": wd} }

// decodeText turns file bytes into text as Python's text mode with
// errors="replace" does: invalid bytes become U+FFFD, and CRLF or CR line
// endings become LF.
func decodeText(data []byte) string {
	s := string(data)
	if !utf8.ValidString(s) {
		var b strings.Builder
		for len(data) > 0 {
			r, n := utf8.DecodeRune(data)
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(data[:n])
			}
			data = data[n:]
		}
		s = b.String()
	}
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

// writeFile writes data to path atomically (a temporary file in the same
// directory, renamed over it), creating parent directories and keeping an
// existing file's permission bits.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // write through a link, not over it
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return os.WriteFile(path, data, mode) // a directory we may not create files in
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp, mode)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func textContent(s string) event.List[event.Content] {
	return event.List[event.Content]{event.Text(s)}
}
