package acp_test

import (
	"testing"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/agent/agenttest"
	"github.com/gohands/gohands/conversation"
)

// TestAgentContract runs the agent contract's suite on the ACP agent,
// against the scripted peer ("ok" answers each prompt with one turn).
func TestAgentContract(t *testing.T) {
	agenttest.Run(t, agenttest.Factory{
		New: func(t *testing.T) conversation.Agent { return acp.New(fakeCommand(t, "ok")...) },
	})
}
