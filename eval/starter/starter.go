// Package starter is gohands' starter evaluation suite: four small tasks
// (fix a failing test, implement a function to a specification, refactor
// without breaking the tests, find a fact in a repository) in Python, so
// that they run in the sandbox image as well as on a developer's machine.
//
// Real models are measured on it; scripted.json is a playbook for
// llm/llmtest (and cmd/llmtest) that solves every task, so that the
// harness itself is tested with a scripted model.
package starter

import (
	"embed"
	"io/fs"

	"github.com/gohands/gohands/eval"
)

//go:embed tasks
var tasks embed.FS

//go:embed scripted.json
var scripted []byte

// Tasks returns the suite's tasks.
func Tasks() ([]*eval.Task, error) { return eval.LoadFS(tasks, "tasks") }

// FS returns the suite's files: a directory per task under "tasks".
func FS() fs.FS { return tasks }

// Playbook returns the llmtest playbook (JSON) that solves every task.
func Playbook() []byte { return scripted }
