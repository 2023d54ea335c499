package protocol

import (
	"encoding/json"
)

// ForkRequest is the body of the fork route (the reference's
// ForkConversationRequest).
type ForkRequest struct {
	ID           *string           `json:"id,omitempty"`
	Title        *string           `json:"title,omitempty" maxLength:"200"`
	Tags         map[string]string `json:"tags,omitempty"`
	ResetMetrics *bool             `json:"reset_metrics,omitempty"`
	FromEventID  *string           `json:"from_event_id,omitempty"`
}

// NavigateRequest is the body of the navigate route.
type NavigateRequest struct {
	EventID *string `json:"event_id,omitempty"`
}

// SwitchLLMRequest is the body of switch_llm: the reference's LLM object.
type SwitchLLMRequest struct {
	LLM json.RawMessage `json:"llm" required:"true"`
}

// SwitchProfileRequest is the body of switch_profile.
type SwitchProfileRequest struct {
	ProfileName string `json:"profile_name" required:"true" minLength:"1"`
}

// LoadPluginRequest is the body of load_plugin: a plugin of the
// conversation's registered marketplaces, "name" or "name@marketplace".
type LoadPluginRequest struct {
	PluginRef string `json:"plugin_ref" required:"true"`
}

// GenerateTitleRequest is the body of generate_title: the longest title
// (1..200, 50 by default) and the model to use instead of the agent's.
type GenerateTitleRequest struct {
	MaxLength *int            `json:"max_length,omitempty" minimum:"1" maximum:"200"`
	LLM       json.RawMessage `json:"llm,omitempty"`
}

// GenerateTitleResponse is the answer of generate_title.
type GenerateTitleResponse struct {
	Title string `json:"title"`
}
