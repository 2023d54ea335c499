package protocol

// BashRequest is the reference's ExecuteBashRequest.
type BashRequest struct {
	Command string  `json:"command" required:"true"`
	Cwd     *string `json:"cwd,omitempty"`
	Timeout *int    `json:"timeout,omitempty" description:"Seconds (default 300)."`
}

// BashPage documents a page of bash events.
type BashPage struct {
	Items      []map[string]any `json:"items"`
	NextPageID *string          `json:"next_page_id"`
}

// ClearedResponse is the answer of the bash events' clear route.
type ClearedResponse struct {
	ClearedCount int `json:"cleared_count"`
}
