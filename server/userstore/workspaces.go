package userstore

import (
	"encoding/json"
	"fmt"
)

// WorkspacesSchemaVersion is the version of workspaces.json this package
// writes; a newer file is refused.
const WorkspacesSchemaVersion = 1

// Workspace is a saved workspace of the app's picker. The app sets ID to
// the path; entries are told apart by Path.
type Workspace struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Path       string  `json:"path"`
	ParentPath *string `json:"parentPath,omitempty"`
}

// WorkspaceParent is a directory whose subdirectories the picker offers.
type WorkspaceParent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
}

// WorkspaceList is workspaces.json.
type WorkspaceList struct {
	SchemaVersion int               `json:"schema_version"`
	Workspaces    []Workspace       `json:"workspaces"`
	Parents       []WorkspaceParent `json:"workspaceParents"`
}

// Workspaces is the store of workspaces.json. It holds no secret.
type Workspaces struct{ f file }

// OpenWorkspaces returns the store of workspaces.json in dir.
func OpenWorkspaces(dir string) *Workspaces {
	return &Workspaces{f: file{dir: dir, name: "workspaces.json"}}
}

func (w *Workspaces) load() (*WorkspaceList, error) {
	b, err := w.f.read()
	if err != nil {
		return nil, err
	}
	l := &WorkspaceList{SchemaVersion: WorkspacesSchemaVersion, Workspaces: []Workspace{}, Parents: []WorkspaceParent{}}
	if b == nil {
		return l, nil
	}
	var raw struct {
		SchemaVersion *json.Number `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, ErrUnreadable
	}
	if raw.SchemaVersion != nil {
		v, err := raw.SchemaVersion.Int64()
		if err != nil || v > WorkspacesSchemaVersion {
			return nil, fmt.Errorf("%w (schema_version %s)", ErrUnreadable, raw.SchemaVersion)
		}
	}
	if err := json.Unmarshal(b, l); err != nil {
		return nil, ErrUnreadable
	}
	l.SchemaVersion = WorkspacesSchemaVersion
	if l.Workspaces == nil {
		l.Workspaces = []Workspace{}
	}
	if l.Parents == nil {
		l.Parents = []WorkspaceParent{}
	}
	return l, nil
}

// List returns the saved workspaces and parents.
func (w *Workspaces) List() (*WorkspaceList, error) {
	var l *WorkspaceList
	err := w.f.locked(func() (err error) {
		l, err = w.load()
		return err
	})
	return l, err
}

// Update applies fn to the list and saves it when fn reports a change.
func (w *Workspaces) Update(fn func(*WorkspaceList) bool) (*WorkspaceList, error) {
	var l *WorkspaceList
	err := w.f.locked(func() (err error) {
		if l, err = w.load(); err != nil {
			return err
		}
		if fn(l) {
			return w.f.write(l)
		}
		return nil
	})
	return l, err
}
