package event

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Marshal encodes e as the reference writes it: compact, null fields
// omitted, "kind" last.
func Marshal(e Event) ([]byte, error) { return MarshalKinded(e) }

// Unmarshal decodes one event of any registered kind.
func Unmarshal(data []byte) (Event, error) { return DecodeKinded[Event](data) }

// rawKinded encodes an optional kinded value for a mirror struct.
func rawKinded(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return MarshalKinded(v)
}

func isNull(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}

// actionEventJSON mirrors ActionEvent with the action as raw JSON, keeping the
// reference's field order.
type actionEventJSON struct {
	Base
	Thought          List[Content]       `json:"thought"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ThinkingBlocks   List[ThinkingBlock] `json:"thinking_blocks"`
	ResponsesItem    *ReasoningItem      `json:"responses_reasoning_item,omitempty"`
	Action           json.RawMessage     `json:"action,omitempty"`
	ToolName         string              `json:"tool_name"`
	ToolCallID       string              `json:"tool_call_id"`
	ToolCall         ToolCall            `json:"tool_call"`
	LLMResponseID    string              `json:"llm_response_id"`
	SecurityRisk     SecurityRisk        `json:"security_risk"`
	CriticResult     *CriticResult       `json:"critic_result,omitempty"`
	Summary          string              `json:"summary,omitempty"`
}

// MarshalJSON implements json.Marshaler. The output has no "kind" of its
// own; use Marshal for a complete event.
func (e *ActionEvent) MarshalJSON() ([]byte, error) {
	action, err := rawKinded(e.Action)
	if err != nil {
		return nil, err
	}
	risk := e.SecurityRisk
	if risk == "" {
		risk = RiskUnknown
	}
	return marshal(actionEventJSON{
		Base: e.Base, Thought: e.Thought, ReasoningContent: e.ReasoningContent,
		ThinkingBlocks: e.ThinkingBlocks, ResponsesItem: e.ResponsesItem, Action: action,
		ToolName: e.ToolName, ToolCallID: e.ToolCallID, ToolCall: e.ToolCall,
		LLMResponseID: e.LLMResponseID, SecurityRisk: risk, CriticResult: e.CriticResult,
		Summary: e.Summary,
	})
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *ActionEvent) UnmarshalJSON(data []byte) error {
	var m actionEventJSON
	if err := unmarshalStrict(data, &m); err != nil {
		return err
	}
	var action Action
	if !isNull(m.Action) {
		a, err := DecodeKinded[Action](m.Action)
		if err != nil {
			return fmt.Errorf("action: %w", err)
		}
		action = a
	}
	if m.SecurityRisk == "" {
		m.SecurityRisk = RiskUnknown
	} else if !m.SecurityRisk.Valid() {
		return fmt.Errorf("invalid security_risk %q", m.SecurityRisk)
	}
	*e = ActionEvent{
		Base: m.Base, Thought: m.Thought, ReasoningContent: m.ReasoningContent,
		ThinkingBlocks: m.ThinkingBlocks, ResponsesItem: m.ResponsesItem, Action: action,
		ToolName: m.ToolName, ToolCallID: m.ToolCallID, ToolCall: m.ToolCall,
		LLMResponseID: m.LLMResponseID, SecurityRisk: m.SecurityRisk, CriticResult: m.CriticResult,
		Summary: m.Summary,
	}
	return nil
}

type observationEventJSON struct {
	Base
	ToolName        string          `json:"tool_name"`
	ToolCallID      string          `json:"tool_call_id"`
	Observation     json.RawMessage `json:"observation"`
	ActionID        string          `json:"action_id"`
	ExtendedContent List[Content]   `json:"extended_content"`
}

// MarshalJSON implements json.Marshaler. The output has no "kind" of its
// own; use Marshal for a complete event.
func (e *ObservationEvent) MarshalJSON() ([]byte, error) {
	if e.Observation == nil {
		return nil, fmt.Errorf("ObservationEvent %s has no observation", e.ID)
	}
	obs, err := MarshalKinded(e.Observation)
	if err != nil {
		return nil, err
	}
	return marshal(observationEventJSON{
		Base: e.Base, ToolName: e.ToolName, ToolCallID: e.ToolCallID,
		Observation: obs, ActionID: e.ActionID, ExtendedContent: e.ExtendedContent,
	})
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *ObservationEvent) UnmarshalJSON(data []byte) error {
	var m observationEventJSON
	if err := unmarshalStrict(data, &m); err != nil {
		return err
	}
	if isNull(m.Observation) {
		return fmt.Errorf("observation: missing")
	}
	obs, err := DecodeKinded[Observation](m.Observation)
	if err != nil {
		return fmt.Errorf("observation: %w", err)
	}
	*e = ObservationEvent{
		Base: m.Base, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		Observation: obs, ActionID: m.ActionID, ExtendedContent: m.ExtendedContent,
	}
	return nil
}
