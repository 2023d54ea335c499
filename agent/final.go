package agent

import (
	"context"
	"encoding/json"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// FinalResponse returns a conversation's final answer: the message of its
// last finish call or its agent's last text message, whichever came last;
// "" if there is none. The server's agent_final_response, the task tool,
// eval and the CLI's result all read it here.
func FinalResponse(ctx context.Context, st *conversation.State) (string, error) {
	log := st.Events()
	for i := log.Len() - 1; i >= 0; i-- {
		en, err := log.Entry(i)
		if err != nil {
			return "", err
		}
		if en.Source != event.SourceAgent || (en.Kind != event.KindAction && en.Kind != event.KindMessage) {
			continue
		}
		e, err := log.Event(ctx, i)
		if err != nil {
			return "", err
		}
		switch e := e.(type) {
		case *event.ActionEvent:
			if e.ToolName != FinishToolName || e.Action == nil {
				continue
			}
			b, err := event.MarshalJSON(e.Action)
			if err != nil {
				return "", err
			}
			var f struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(b, &f); err != nil {
				return "", err
			}
			return f.Message, nil
		case *event.MessageEvent:
			return event.TextOf(e.LLMMessage.Content), nil
		}
	}
	return "", nil
}
