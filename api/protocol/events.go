package protocol

import (
	"github.com/gohands/gohands/event"
)

// SendMessageRequest is the reference's SendMessageRequest.
type SendMessageRequest struct {
	Role    string          `json:"role,omitempty" enum:"user,system,assistant,tool"`
	Content []event.Content `json:"content"`
	Run     bool            `json:"run"`
}

// ConfirmationRequest is the body of respond_to_confirmation.
type ConfirmationRequest struct {
	Accept bool   `json:"accept" required:"true"`
	Reason string `json:"reason,omitempty"`
}

// EventPage documents a page of events.
type EventPage struct {
	Items      []map[string]any `json:"items"`
	NextPageID *string          `json:"next_page_id"`
}
