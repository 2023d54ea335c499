package task

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
)

// adoptOld copies, under their derived ids, the sub-conversations that
// gohands stored under random ids before those ids were derived from the
// caller's and the task's: nothing in them names their task, so each is
// matched by its first message, which is the prompt of the task call that
// started it (as the caller's log records it). A prompt that two tasks or
// two sub-conversations share is left alone; the old copies stay.
func (m *manager) adoptOld(ctx context.Context, log *conversation.Log, lg *slog.Logger) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	known := map[string]bool{}
	for _, rec := range m.tasks {
		known[filepath.Base(filestore.Dir(m.dir, rec.conversationID))] = true
	}
	var old []string // ids
	for _, e := range entries {
		if !e.IsDir() || known[e.Name()] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(m.dir, e.Name(), filestore.BaseStateFile))
		var head struct {
			ID string `json:"id"`
		}
		if err == nil && json.Unmarshal(data, &head) == nil && head.ID != "" && !known[filepath.Base(filestore.Dir(m.dir, head.ID))] {
			old = append(old, head.ID)
		}
	}
	if len(old) == 0 {
		return
	}
	// The prompts of the caller's new tasks, by task id.
	calls := map[string]string{} // tool call id → prompt
	prompts := map[string]string{}
	promptUses := map[string]int{}
	for i := range log.Len() {
		e, err := log.Event(ctx, i)
		if err != nil {
			return
		}
		switch e := e.(type) {
		case *event.ActionEvent:
			if a, ok := e.Action.(*Action); ok && (a.Resume == nil || *a.Resume == "") {
				calls[e.ToolCallID] = a.Prompt
			}
		case *event.ObservationEvent:
			if o, ok := e.Observation.(*Observation); ok {
				if p, ok := calls[e.ToolCallID]; ok && prompts[o.TaskID] == "" {
					prompts[o.TaskID] = p
					promptUses[p]++
				}
			}
		}
	}
	src := filestore.NewBackend(m.dir, nil)
	byPrompt := map[string][]string{}
	for _, id := range old {
		if p, ok := firstMessage(ctx, src, id); ok {
			byPrompt[p] = append(byPrompt[p], id)
		}
	}
	for tid, p := range prompts {
		cid := subConversationID(m.parentID, tid)
		if promptUses[p] != 1 || len(byPrompt[p]) != 1 {
			continue
		}
		if _, err := os.Stat(filepath.Join(filestore.Dir(m.dir, cid), filestore.BaseStateFile)); err == nil {
			continue
		}
		if err := copyStored(ctx, src, byPrompt[p][0], src, cid); err != nil {
			lg.Warn("task: an old sub-conversation was not adopted", "task", tid, "conversation", byPrompt[p][0], "err", err)
			continue
		}
		lg.Info("task: an old sub-conversation adopted under its derived id", "task", tid, "from", byPrompt[p][0], "to", cid)
	}
}

// firstMessage returns the text of the first user message of the
// conversation id stored by b.
func firstMessage(ctx context.Context, b *filestore.Backend, id string) (string, bool) {
	store, err := b.Open(ctx, id)
	if err != nil {
		return "", false
	}
	defer store.Close()
	st, err := conversation.OpenID(ctx, store, id, nil)
	if err != nil {
		return "", false
	}
	log := st.Events()
	for i := range log.Len() {
		e, err := log.Event(ctx, i)
		if err != nil {
			return "", false
		}
		if me, ok := e.(*event.MessageEvent); ok && me.Source == event.SourceUser {
			return event.TextOf(me.LLMMessage.Content), true
		}
	}
	return "", false
}
