package task

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

func init() {
	conversation.RegisterRestartNote(Name, restartNote)
}

// restartNote tells the model, in the restart error of a task call a crash
// cut short, the id of the task to resume: the call's own resume, else
// the stored tasks of the caller whose sub-conversation was left running.
// The 1.58.2 reference keeps its tasks in memory and has nothing to say.
func restartNote(id, dir string, raw json.RawMessage) string {
	var ev struct {
		Action Action `json:"action"`
	}
	_ = json.Unmarshal(raw, &ev) // a call that does not parse names no task
	cut := []string{}
	if r := ev.Action.Resume; r != nil && *r != "" {
		cut = append(cut, *r)
	} else if dir != "" {
		cut = cutShort(id, filepath.Join(dir, "subagents"))
	}
	if len(cut) == 0 {
		return ""
	}
	return fmt.Sprintf("The sub-agent's task %s was cut short; call task with resume set to its id to continue it.", strings.Join(cut, ", "))
}

// cutShort lists the tasks of the conversation id, stored in dir, whose
// sub-conversation's stored status is running: its process died mid-run.
func cutShort(id, dir string) []string {
	var out []string
	m := &manager{}
	for n := 1; ; n++ {
		tid := m.taskID(n)
		st, ok := storedStatus(id, dir, tid)
		if !ok {
			return out
		}
		if st == conversation.StatusRunning {
			out = append(out, tid)
		}
	}
}

// StoredStatus returns the stored execution status of the task taskID of
// the conversation id stored in the directory dir, and whether the task's
// sub-conversation is stored there.
func StoredStatus(id, dir, taskID string) (conversation.ExecutionStatus, bool) {
	return storedStatus(id, filepath.Join(dir, "subagents"), taskID)
}

// storedStatus is StoredStatus with the directory of the
// sub-conversations.
func storedStatus(id, subDir, taskID string) (conversation.ExecutionStatus, bool) {
	data, err := os.ReadFile(filepath.Join(filestore.Dir(subDir, subConversationID(id, taskID)), filestore.BaseStateFile))
	if err != nil {
		return "", false
	}
	var st struct {
		Status conversation.ExecutionStatus `json:"execution_status"`
	}
	json.Unmarshal(data, &st) // a state that does not parse has no status
	return st.Status, true
}
