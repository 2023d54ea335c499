package acp_test

import (
	"cmp"
	"testing"

	"github.com/gohands/gohands/agent/acp"
)

func TestDiscover(t *testing.T) {
	for _, c := range []struct {
		mode, current string
		models        []string
		code          string
		name          string // the server's agentInfo.name, "fake-acp" if empty
	}{
		{mode: "options", name: "codex-acp", current: "m-big", models: []string{"m-fast", "m-big"}},
		{mode: "models", current: "m-fast", models: []string{"m-fast", "m-big"}},
		{mode: "options", current: "m-big", models: []string{"m-fast", "m-big"}},
		{mode: "ok"},
		{mode: "auth", code: acp.CodeAuthRequired},
		{mode: "exit", code: acp.CodeInit},
	} {
		t.Run(c.mode+c.name, func(t *testing.T) {
			if c.name != "" {
				t.Setenv("GOHANDS_FAKE_NAME", c.name)
			}
			a := &acp.Agent{Command: fakeCommand(t, c.mode), StartupTimeout: 60}
			d := acp.Discover(t.Context(), a, map[string]string{"SOME_KEY": "v"}, t.TempDir())
			if c.code != "" {
				if d.Error == nil || d.Error.Code != c.code || d.AvailableModels == nil || d.CurrentModelID != nil {
					t.Fatalf("want error %s, got %+v", c.code, d)
				}
				return
			}
			// A server known to take a live switch says so; an unknown one does not.
			name := cmp.Or(c.name, "fake-acp")
			if d.Error != nil || ptr(d.AgentName) != name || d.AgentVersion == nil || d.SupportsRuntimeModelSwitch != (c.name != "") {
				t.Fatalf("discovery: %+v", d)
			}
			var ids []string
			for _, m := range d.AvailableModels {
				ids = append(ids, m.ModelID)
				if m.Name == nil || *m.Name == "" {
					t.Errorf("model without its name: %+v", m)
				}
			}
			if got := ptr(d.CurrentModelID); got != c.current || len(ids) != len(c.models) || (len(ids) > 0 && (ids[0] != c.models[0] || ids[1] != c.models[1])) {
				t.Errorf("current %q, models %v; want %q, %v", got, ids, c.current, c.models)
			}
		})
	}
}

func ptr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
