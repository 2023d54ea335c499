package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/tools/task"
)

// A workflow keeps, while it runs, a journal of the sub-agent tasks it
// started (their ids, prompts and kinds) in the calling conversation's
// directory, under workflows/, named after its name and script. It is
// deleted when the workflow ends with a result. One left behind is a run
// that a crash (or a pause) cut short: the same workflow run again takes
// up its tasks instead of starting them over. A call of the script is
// matched to the first unclaimed task with its prompt and kind: one that
// finished gives its stored answer without running, one that did not is
// resumed (the action its crash cut short answered with the restart
// error, not run again). The 1.58.2 reference keeps its workflow's tasks
// in memory; after a restart its workflow starts over.

// continuePrompt resumes a sub-agent its workflow's restart cut short.
const continuePrompt = "Your work on this task was cut short by a restart. Check what is already done, finish the task and give your final answer."

// journal is a workflow run's record of its tasks.
type journal struct {
	path string // "" when the caller is not stored in a directory

	mu      sync.Mutex
	entries []journalEntry
	claimed []bool // of the entries found at the start
}

type journalEntry struct {
	TaskID       string `json:"task_id"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
}

// journalPath is where the workflow a keeps its journal for a caller
// stored in dir.
func journalPath(dir string, a *Action) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(a.Name + "\x00" + a.Script))
	return filepath.Join(dir, "workflows", hex.EncodeToString(sum[:8])+".json")
}

// openJournal reads the journal at path, if there is one.
func openJournal(path string) (*journal, error) {
	j := &journal{path: path}
	if path == "" {
		return j, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return j, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &j.entries); err != nil {
		return nil, fmt.Errorf("workflow journal %s: %w", path, err)
	}
	j.claimed = make([]bool, len(j.entries))
	return j, nil
}

// claim returns the id of the first task of an earlier run not claimed yet
// with this prompt and kind.
func (j *journal) claim(prompt, subagentType string) (string, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, c := range j.claimed {
		if e := j.entries[i]; !c && e.Prompt == prompt && e.SubagentType == subagentType {
			j.claimed[i] = true
			return e.TaskID, true
		}
	}
	return "", false
}

// add records a task the run started.
func (j *journal) add(e journalEntry) error {
	if j.path == "" {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, e)
	data, err := json.Marshal(j.entries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return err
	}
	tmp := j.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, j.path)
}

// remove deletes the journal: the run ended with a result.
func (j *journal) remove() error {
	if j.path == "" {
		return nil
	}
	if err := os.Remove(j.path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func init() {
	conversation.RegisterRestartNote(Name, restartNote)
}

// restartNote tells the model, in the restart error of a workflow a crash
// cut short, which of its sub-agents finished and which were cut short,
// and that running the same workflow again takes them up.
func restartNote(id, dir string, raw json.RawMessage) string {
	var ev struct {
		Action Action `json:"action"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return ""
	}
	j, err := openJournal(journalPath(dir, &ev.Action))
	if err != nil || len(j.entries) == 0 {
		return ""
	}
	var tasks []string
	for _, e := range j.entries {
		state := "cut short"
		if st, _ := task.StoredStatus(id, dir, e.TaskID); st == conversation.StatusFinished {
			state = "finished"
		}
		tasks = append(tasks, fmt.Sprintf("%s (%s)", e.TaskID, state))
	}
	return fmt.Sprintf("The workflow's sub-agents %s keep their work: run the same workflow again (the same name and script) to take them up: a finished one gives its answer without running again, one cut short continues.", strings.Join(tasks, ", "))
}
