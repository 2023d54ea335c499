package conversation

import (
	"encoding/json"
	"sync"
)

// RestartNoteFunc returns what to add to the restart error of an action of
// its tool that a crash cut short, in the conversation id stored in dir
// ("" when it is not stored in a directory): for example the id under
// which the work can be resumed. "" adds nothing.
type RestartNoteFunc func(id, dir string, action json.RawMessage) string

var restartNotes sync.Map // tool name → RestartNoteFunc

// RegisterRestartNote makes f add to the restart error of the actions of
// the tool toolName (see State.RecoverRunning). A tool package calls it
// from init.
func RegisterRestartNote(toolName string, f RestartNoteFunc) {
	restartNotes.Store(toolName, f)
}

// restartNote is the conversation's Options.RestartNote.
func (c *LocalConversation) restartNote(toolName string, action json.RawMessage) string {
	f, ok := restartNotes.Load(toolName)
	if !ok {
		return ""
	}
	return f.(RestartNoteFunc)(c.id, c.dir, action)
}
