// Package workspace describes where an agent works: a directory on this
// machine or a remote agent server.
package workspace

import "github.com/gohands/gohands/event"

// LocalWorkspace is a working directory on the machine the agent runs on. It
// encodes as the reference's {"working_dir":...,"kind":"LocalWorkspace"}.
type LocalWorkspace struct {
	WorkingDir string `json:"working_dir"`
}

func init() { event.RegisterKind[LocalWorkspace]("LocalWorkspace") }
