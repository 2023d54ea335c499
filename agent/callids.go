package agent

import (
	"slices"
	"strconv"

	"github.com/gohands/gohands/event"
)

// uniqueCallIDs gives every tool call of a reply an id no earlier call of
// the conversation has, nor another call of the reply. A model that
// reuses an id (or sends none) would otherwise make two actions answer to
// one id: providers reject a history holding a tool-call id twice, and the
// store pairs an observation with the wrong action after a resume. A
// renamed id is the model's id with a suffix ("call_1" becomes "call_1-2");
// the model only ever sees the renamed one, in the history it is sent.
func (r *runner) uniqueCallIDs(calls []event.ToolCall) {
	if r.callIDs == nil {
		r.callIDs = make(map[string]bool)
		for _, en := range r.sess.State().Events().Entries() {
			if en.ToolCallID != "" {
				r.callIDs[en.ToolCallID] = true
			}
		}
	}
	for i := range calls {
		id := calls[i].ID
		if id == "" {
			id = "call"
		}
		if r.callIDs[id] {
			base := id
			for k := 2; r.callIDs[id]; k++ {
				id = base + "-" + strconv.Itoa(k)
			}
		}
		if id != calls[i].ID {
			r.sess.Logger().Info("agent: tool call id renamed to keep ids unique", "model_id", calls[i].ID, "id", id)
			calls[i].ID = id
		}
		r.callIDs[id] = true
	}
}

// orderToolResults returns msgs with the answers to each assistant
// message's tool calls moved up to follow it at once. The log can hold
// other messages between a call and its answer (a user message sent while
// the calls waited for confirmation, or while they ran), and providers
// reject a history where anything comes between them: the messages in
// between follow the answers instead. msgs is not modified; it is
// returned as it is when already in order.
func orderToolResults(msgs []event.Message) []event.Message {
	if toolResultsInOrder(msgs, 0) {
		return msgs
	}
	out := make([]event.Message, 0, len(msgs))
	moved := make([]bool, len(msgs))
	for i, m := range msgs {
		if moved[i] {
			continue
		}
		out = append(out, m)
		if m.Role != event.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		want := make(map[string]bool, len(m.ToolCalls))
		for _, tc := range m.ToolCalls {
			want[tc.ID] = true
		}
		for j := i + 1; j < len(msgs) && len(want) > 0; j++ {
			n := msgs[j]
			if moved[j] || n.Role != event.RoleTool || !want[n.ToolCallID] {
				continue
			}
			// The calls' answers stop at the next assistant turn that
			// follows them: an id reused later belongs to that turn.
			delete(want, n.ToolCallID)
			out = append(out, n)
			moved[j] = true
		}
	}
	return out
}

// toolResultsInOrder reports whether every assistant message with tool
// calls, from msgs[from] on, is followed at once by one answer to each
// call. It allocates nothing: it runs before every model call.
func toolResultsInOrder(msgs []event.Message, from int) bool {
	for i := from; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role != event.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		k := len(m.ToolCalls)
		if i+k >= len(msgs) {
			return false
		}
		for j, n := range msgs[i+1 : i+1+k] {
			if n.Role != event.RoleTool || !slices.ContainsFunc(m.ToolCalls, func(tc event.ToolCall) bool { return tc.ID == n.ToolCallID }) {
				return false
			}
			for _, p := range msgs[i+1 : i+1+j] {
				if p.ToolCallID == n.ToolCallID {
					return false // answered twice
				}
			}
		}
	}
	return true
}
