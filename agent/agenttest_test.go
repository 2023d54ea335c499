package agent_test

import (
	"testing"

	"github.com/gohands/gohands/agent/agenttest"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestAgentContract runs the agent contract's suite on the default agent,
// its model a scripted one that answers every call with text (which
// finishes a turn).
func TestAgentContract(t *testing.T) {
	agenttest.Run(t, agenttest.Factory{
		New: func(t *testing.T) conversation.Agent {
			replies := make([]llmtest.Reply, 10)
			for i := range replies {
				replies[i] = llmtest.Reply{Text: "done"}
			}
			a, _ := newAgent(t, replies...)
			return a
		},
	})
}
