package llm

import "errors"

// mockTools is the prompt-based tool calling of one call, used when native
// tool calling is off.
type mockTools struct{}

// prepareMockTools rewrites req for prompt-based tool calling when the
// config turns native tool calling off; it returns nil when not needed.
func (l *LLM) prepareMockTools(req *Request) (*mockTools, error) {
	if l.cfg.NativeToolCalling || len(req.Tools) == 0 {
		return nil, nil
	}
	return nil, errors.New("llm: prompt-based tool calling is not implemented yet")
}

func (m *mockTools) parse(resp *Response) (*Response, error) { return resp, nil }
