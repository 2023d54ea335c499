package server_test

import (
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// A conversation's start fetches only the registered marketplaces that
// auto-load something (as 1.58.2): one without auto_load, on a loopback
// server that never answers, is not contacted and costs the start
// nothing, while an auto-loading one beside it still reaches the model.
// The status wait is the only deadline (a hang guard, shorter than the
// default fetch timeout).
func TestStartSkipsLazyMarketplace(t *testing.T) {
	t.Parallel()
	addr, accepted := hangingListener(t)

	model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	mk := writePlugin(t, t.TempDir(), map[string]string{
		".plugin/marketplace.json":     `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}]}`,
		"plugins/helper/skills/tip.md": "AUTO-LOADED-MARKETPLACE-SKILL",
	})
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["agent"].(map[string]any)["agent_context"] = map[string]any{
		"registered_marketplaces": []any{
			map[string]any{"name": "lazy", "source": "http://user:pw@" + addr + "/market.git"},
			map[string]any{"name": "off", "source": "http://" + addr + "/other.git", "auto_load": false},
			map[string]any{"name": "company", "source": mk, "auto_load": true},
		},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	ts.waitStatus(info["id"].(string), "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "AUTO-LOADED-MARKETPLACE-SKILL") {
		t.Error("the auto-loaded marketplace's skill did not reach the model")
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the start contacted the marketplaces that auto-load nothing %d times", n)
	}
}
