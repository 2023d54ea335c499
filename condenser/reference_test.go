package condenser

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
)

// TestReferenceIndices compares ManipulationIndices with the indices the
// Python reference computed for 200 random event sequences
// (testdata/reference_indices.json, made by testdata/gen_indices.py).
func TestReferenceIndices(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_indices.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Events       []string `json:"events"`
		Indices      []int    `json:"indices"`
		EventsRange  []int    `json:"events_range"`
		RequestRange []int    `json:"request_range"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	for i, c := range cases {
		events := make([]event.Event, len(c.Events))
		for j, tok := range c.Events {
			events[j] = fromToken(t, tok)
		}
		if got := ManipulationIndices(events); !slices.Equal(got, c.Indices) {
			t.Errorf("case %d %v: indices %v, reference %v", i, c.Events, got, c.Indices)
		}
		cond := &LLMSummarizing{MaxSize: 8, KeepFirst: 2, MinimumProgress: DefaultMinimumProgress}
		for _, rc := range []struct {
			request bool
			want    []int
		}{{false, c.EventsRange}, {true, c.RequestRange}} {
			v := &View{Events: events, UnhandledRequest: rc.request}
			r := cond.reasons(v, nil)
			var got []int
			if r.any() {
				if start, end, err := cond.forgetRange(v, r); err == nil {
					got = []int{start, end}
				}
			}
			if !slices.Equal(got, rc.want) {
				t.Errorf("case %d %v request=%v: forget %v, reference %v", i, c.Events, rc.request, got, rc.want)
			}
		}
	}
}

// fromToken makes an event from the fixture's compact notation (see
// testdata/gen_indices.py).
func fromToken(t *testing.T, tok string) event.Event {
	t.Helper()
	f := strings.Split(tok, ":")
	switch f[0] {
	case "S":
		return &event.SystemPromptEvent{SystemPrompt: event.Text("s")}
	case "U":
		return &event.MessageEvent{Base: event.Base{Source: event.SourceUser}, LLMMessage: event.UserMessage("u")}
	case "A", "T":
		a := &event.ActionEvent{LLMResponseID: f[1], ToolCallID: f[2], ToolName: "think",
			ToolCall: event.ToolCall{ID: f[2], Name: "think", Arguments: "{}", Origin: event.OriginCompletion}}
		if f[0] == "T" {
			a.ThinkingBlocks = event.List[event.ThinkingBlock]{{Thinking: "h"}}
		}
		return a
	case "O":
		return &event.ObservationEvent{ToolName: "think", ToolCallID: f[1], Observation: &obs{}}
	case "R":
		return &event.UserRejectObservation{ToolName: "think", ToolCallID: f[1]}
	case "E":
		return &event.AgentErrorEvent{ToolName: "think", ToolCallID: f[1]}
	}
	t.Fatalf("bad token %q", tok)
	return nil
}
