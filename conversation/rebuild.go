package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/gohands/gohands/event"
)

// RebuildBase returns a base state for conversation id rebuilt from its
// log, for when base_state.json is lost and no earlier copy is left: the
// fields the log recorded (the ConversationStateUpdateEvents an agent
// server records, see Options.RecordChanges) over the defaults. The
// execution status is error, so that opening it answers every action whose
// outcome is not stored instead of running it again (see New), and HEAD is
// the last event. What the log did not record is lost: without a recorded
// agent and workspace, the ones given on resume are used unchecked.
func RebuildBase(ctx context.Context, store *Log, id string) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	for i := range store.Len() {
		ent, err := store.Entry(i)
		if err != nil || ent.Kind != event.KindConversationStateUpdate {
			continue
		}
		ev, err := store.Event(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("conversation: rebuilding the base state: %w", err)
		}
		u, ok := ev.(*event.ConversationStateUpdateEvent)
		if !ok {
			continue
		}
		val, err := json.Marshal(u.Value)
		if err != nil {
			continue
		}
		if u.Key == "full_state" {
			var all map[string]json.RawMessage
			if json.Unmarshal(val, &all) == nil {
				maps.Copy(obj, all)
			}
			continue
		}
		obj[u.Key] = val
	}
	obj["id"], _ = json.Marshal(id)
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("conversation: rebuilding the base state: %w", err)
	}
	f, err := DecodeFields(data, nil)
	if err != nil {
		// A recorded value that does not decode: keep the defaults.
		f = NewFields(id, nil, nil)
		f.PersistenceDir = DefaultPersistenceDir
	}
	f.ExecutionStatus = StatusError
	f.LeafEventID, f.HeadIsEmpty = "", false
	ms, err := encodeMembers(f, nil)
	if err != nil {
		return nil, fmt.Errorf("conversation: rebuilding the base state: %w", err)
	}
	return joinMembers(ms), nil
}
