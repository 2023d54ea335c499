// Package askoracle is the ask_oracle tool: the agent asks a second, usually
// stronger, model for advice on a hard question. The oracle is the user's
// saved LLM profile named "oracle"; it gets only the question and the
// context the agent writes, never the conversation or any tool, and the
// agent's own model is not switched.
//
// The tool speaks the reference's wire format (kinds AskOracleTool,
// AskOracleAction, AskOracleObservation, declared in package event) and
// is registered as "ask_oracle".
package askoracle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name, and its registry name; Profile the LLM profile
// it consults; UsageID the key of the oracle's costs in the conversation's
// stats (the reference's).
const (
	Name    = "ask_oracle"
	Profile = "oracle"
	UsageID = "oracle:oracle"
)

func init() {
	tool.Register(Name, func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		if p := strings.TrimSpace(string(params)); p != "{}" && p != "null" && p != "" {
			return nil, fmt.Errorf("%s takes no params (got %s)", Name, p)
		}
		var consult Consult
		if ctx.Conversation != nil {
			consult = ctx.Conversation.Consult
		}
		return []tool.Tool{New(consult)}, nil
	})
}

const description = `Ask the oracle, a stronger model, for a second opinion when you are stuck, unsure, or choosing between approaches. It sees only your question and context, not the conversation, so include what it needs. Follow its advice unless you have a clear reason not to.`

// systemPrompt tells the oracle its role (our own words).
const systemPrompt = `You advise a software agent that asks you a question. Answer it directly with a concrete recommendation it can act on, and name the main risks. You cannot run tools or do the work yourself.`

// Consult asks an LLM profile for one reply (tool.Conversation's Consult).
type Consult func(ctx context.Context, profile, usageID string, msgs []event.Message) (event.Message, error)

// New returns the ask_oracle tool asking through consult (nil: the tool
// answers every call with an error saying there is no oracle).
func New(consult Consult) *tool.Typed[event.AskOracleAction, *event.AskOracleObservation] {
	return tool.New(Name, description, func(ctx context.Context, a *event.AskOracleAction) (*event.AskOracleObservation, error) {
		if consult == nil {
			return failed("The oracle is not available: this conversation cannot consult another model."), nil
		}
		q := "Question:\n" + a.Question
		if strings.TrimSpace(a.Context) != "" {
			q += "\n\nContext from the agent:\n" + a.Context
		}
		msgs := []event.Message{
			{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(systemPrompt)}},
			event.UserMessage(q),
		}
		reply, err := consult(ctx, Profile, UsageID, msgs)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return failed(fmt.Sprintf("The oracle is not available (save an LLM profile named %q to use it): %v", Profile, err)), nil
		}
		var b strings.Builder
		for _, c := range reply.Content {
			if c.Type == event.ContentText {
				b.WriteString(c.Text)
			}
		}
		text := strings.TrimSpace(b.String())
		if text == "" {
			return failed("The oracle returned an empty answer."), nil
		}
		return &event.AskOracleObservation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}}, nil
	}, &tool.Options{
		Kind: "AskOracleTool",
		Annotations: &event.ToolAnnotations{
			ReadOnlyHint:  true,
			OpenWorldHint: true,
		},
	})
}

func failed(text string) *event.AskOracleObservation {
	return &event.AskOracleObservation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}, IsError: true}}
}
