package fileeditor

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/tool"
)

// PresentAction implements tool.ActionPresenter: the command and the path.
func (a Action) PresentAction() tool.ActionView {
	if a.Path == "" {
		return tool.ActionView{}
	}
	return tool.ActionView{Summary: tool.OneLine(a.Command) + " " + a.Path}
}

// PresentObservation implements tool.ObservationPresenter: an edit that
// succeeded is shown as the change it made.
func (o *Observation) PresentObservation() tool.ObservationView {
	if o.NewContent == nil || o.IsError || o.Command == "view" {
		return tool.ObservationView{}
	}
	e := &tool.Edit{New: *o.NewContent, Created: !o.PrevExist}
	if o.Path != nil {
		e.Path = *o.Path
	}
	if o.OldContent != nil {
		e.Old = *o.OldContent
	}
	return tool.ObservationView{Edit: e}
}

// maxPreviewRead bounds the file an edit's preview reads.
const maxPreviewRead = 4 << 20

// PreviewAction implements tool.ActionPreviewer: the change an edit would
// make to the file as it is now.
func (a Action) PreviewAction(workDir string) *tool.Edit {
	path := a.Path
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	current, exists := readForPreview(path)
	switch a.Command {
	case "create":
		if a.FileText == nil {
			return nil
		}
		return &tool.Edit{Path: path, Old: current, New: *a.FileText, Created: !exists}
	case "str_replace":
		if a.OldStr == nil {
			return nil
		}
		n := ""
		if a.NewStr != nil {
			n = *a.NewStr
		}
		if exists && *a.OldStr != "" && strings.Count(current, *a.OldStr) == 1 {
			return &tool.Edit{Path: path, Old: current, New: strings.Replace(current, *a.OldStr, n, 1)}
		}
		// The edit will fail; show what was asked.
		return &tool.Edit{Path: path, Old: *a.OldStr, New: n, Note: "old_str is not found once in the file as it is now"}
	case "insert":
		if a.NewStr == nil || a.InsertLine == nil || !exists {
			return nil
		}
		lines := strings.SplitAfter(current, "\n")
		at := min(max(*a.InsertLine, 0), len(lines))
		ins := *a.NewStr
		if !strings.HasSuffix(ins, "\n") && at < len(lines) {
			ins += "\n"
		}
		if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
			ins = "\n" + ins
		}
		return &tool.Edit{Path: path, Old: current, New: strings.Join(lines[:at], "") + ins + strings.Join(lines[at:], "")}
	}
	return nil
}

// readForPreview reads a regular file, at most maxPreviewRead bytes.
func readForPreview(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPreviewRead))
	if err != nil {
		return "", false
	}
	return string(b), true
}
