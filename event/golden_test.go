package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/golden"
	"github.com/gohands/gohands/internal/wire"
)

const goldenTime = "2026-08-22T10:15:03.482911"

func gid(n int) string { return fmt.Sprintf("%08x-1111-4222-8333-444455556666", n) }

func gbase(n int, source Source, parent int) Base {
	b := Base{ID: gid(n), Timestamp: goldenTime, Source: source}
	if parent >= 0 {
		b.ParentID = gid(parent)
	}
	return b
}

// goldenEvents returns a representative value of every event kind, and
// variants for the optional parts. Each is written to
// testdata/golden/<name>.json.
func goldenEvents() map[string]Event {
	call := ToolCall{ID: "call_1", Name: "terminal", Arguments: `{"command": "ls"}`, Origin: OriginCompletion}
	return map[string]Event{
		"SystemPromptEvent": &SystemPromptEvent{
			Base:         gbase(1, SourceAgent, -1),
			SystemPrompt: Text("You are an agent."),
			Tools: []ToolDefinition{{
				Description: "Run a command.", ActionType: "TerminalAction", ObservationType: "TerminalObservation",
				Annotations: &ToolAnnotations{Title: "terminal", DestructiveHint: true, OpenWorldHint: true},
				Meta:        json.RawMessage(`{"z":1,"a":[0.0]}`), Kind: "TerminalTool", Title: "terminal",
			}},
			DynamicContext: new(Text("<RUNTIME>go</RUNTIME>")),
		},
		"SystemPromptEvent_min": &SystemPromptEvent{Base: gbase(2, "", -1), SystemPrompt: Text("s"), Tools: []ToolDefinition{}},
		"MessageEvent_user": &MessageEvent{
			Base: gbase(3, SourceUser, 1),
			LLMMessage: Message{Role: RoleUser, Content: List[Content]{
				Text("List the files <b>&</b> — ünïcødé \u2028 \x01"), {Type: ContentImage, ImageURLs: []string{"https://x/y.png"}, CachePrompt: true},
			}},
			ActivatedSkills: List[string]{"git"},
			ExtendedContent: List[Content]{Text("<EXTRA_INFO/>")},
			Sender:          "cli",
		},
		"MessageEvent_agent": &MessageEvent{
			Base: gbase(4, SourceAgent, 3),
			LLMMessage: Message{
				Role: RoleAssistant, Content: List[Content]{Text("Done.")}, ReasoningContent: "because",
				ThinkingBlocks: List[ThinkingBlock]{{Thinking: "hm", Signature: new("sig")}, {Redacted: true, Data: "opaque"}},
				ResponsesItem:  &ReasoningItem{ID: "rs_1", Summary: List[string]{"s"}, Content: []string{}, EncryptedContent: "enc", Status: "completed"},
			},
			LLMResponseID: "chatcmpl-1",
			CriticResult:  &CriticResult{Score: 1, Metadata: json.RawMessage(`{"event_ids":["a"]}`)},
		},
		"ActionEvent": &ActionEvent{
			Base:     gbase(5, SourceAgent, 4),
			Thought:  List[Content]{Text("I'll list the files.")},
			Action:   &terminalAction{Command: "ls", Timeout: new(30.0)},
			ToolName: "terminal", ToolCallID: call.ID, ToolCall: call, LLMResponseID: "chatcmpl-2",
			SecurityRisk: RiskLow, Summary: "list files",
			CriticResult: &CriticResult{Score: 0.25, Message: new("meh")},
		},
		"ActionEvent_nonexecutable": &ActionEvent{
			Base: gbase(6, "", -1), ReasoningContent: "r",
			ThinkingBlocks: List[ThinkingBlock]{{Thinking: "t"}},
			ResponsesItem:  &ReasoningItem{},
			ToolName:       "nope", ToolCallID: "fc_1",
			ToolCall:      ToolCall{ID: "fc_1", ResponsesItemID: "fc_item", Name: "nope", Arguments: "{", Origin: OriginResponses},
			LLMResponseID: "resp_1",
		},
		"ObservationEvent": &ObservationEvent{
			Base:     gbase(7, SourceEnvironment, 5),
			ToolName: "terminal", ToolCallID: call.ID, ActionID: gid(5),
			Observation: &terminalObservation{
				ObservationBase: ObservationBase{Content: List[Content]{Text("a.go\nb.go\n")}},
				Command:         new("ls"), ExitCode: new(0),
				Metadata: cmdOutputMetadata{ExitCode: 0, PID: 42, WorkingDir: new("/w")},
			},
			ExtendedContent: List[Content]{Text("rule")},
		},
		"ObservationEvent_error": &ObservationEvent{
			Base: gbase(8, "", -1), ToolName: "terminal", ToolCallID: "c2", ActionID: gid(5),
			Observation: &terminalObservation{
				ObservationBase: ObservationBase{IsError: true},
				Timeout:         true, Metadata: cmdOutputMetadata{ExitCode: -1, PID: -1},
			},
		},
		"UserRejectObservation": &UserRejectObservation{
			Base: gbase(9, "", -1), ToolName: "terminal", ToolCallID: "c3", ActionID: gid(5),
			RejectionReason: DefaultRejectionReason,
		},
		"UserRejectObservation_hook": &UserRejectObservation{
			Base: gbase(10, SourceHook, -1), ToolName: "terminal", ToolCallID: "c4", ActionID: gid(5),
			RejectionReason: "blocked", RejectionSource: RejectedByHook,
		},
		"AgentErrorEvent": &AgentErrorEvent{Base: gbase(11, "", -1), ToolName: "nope", ToolCallID: "c5", Error: "Tool 'nope' not found."},
		"AgentErrorEvent_classified": &AgentErrorEvent{
			Base: gbase(12, "", -1), ToolName: "terminal", ToolCallID: "c6", Error: "bad",
			Classification: ErrorClassification{Kind: ErrorKindAgentAction, Retryable: true, UserAction: UserActionRetry, ErrorID: "E1"},
		},
		"Condensation": &Condensation{
			Base: gbase(13, "", -1), ForgottenEventIDs: List[string]{gid(3), gid(4)},
			Summary: new("summary"), SummaryOffset: new(1), LLMResponseID: "chatcmpl-3",
		},
		"Condensation_min":         &Condensation{Base: gbase(14, "", -1), LLMResponseID: "x"},
		"CondensationRequest":      &CondensationRequest{Base: gbase(15, "", -1)},
		"CondensationSummaryEvent": &CondensationSummaryEvent{Base: gbase(16, "", -1), Summary: "so far"},
		"ConversationStateUpdateEvent": &ConversationStateUpdateEvent{
			Base: gbase(17, "", -1), Key: "execution_status", Value: "running",
		},
		"ConversationStateUpdateEvent_raw": &ConversationStateUpdateEvent{
			Base: gbase(18, "", -1), Key: "stats", Value: json.RawMessage(`{"b":0.0,"a":null}`),
		},
		"ConversationErrorEvent": &ConversationErrorEvent{
			Base: gbase(19, SourceEnvironment, -1), Code: "MaxIterationsReached", Detail: "limit 500",
		},
		"PauseEvent":     &PauseEvent{Base: gbase(20, "", -1)},
		"InterruptEvent": &InterruptEvent{Base: gbase(21, "", -1)},
		"HookExecutionEvent": &HookExecutionEvent{
			Base: gbase(22, "", -1), HookEventType: HookPreToolUse, HookCommand: "./check.sh", ToolName: "terminal",
			Blocked: true, ExitCode: 2, Stderr: "no", Reason: "denied", AdditionalContext: "ctx", Error: "e",
			ActionID: gid(5), MessageID: gid(3), HookInput: json.RawMessage(`{"tool_input":{"command":"rm"}}`),
		},
		"HookExecutionEvent_min": &HookExecutionEvent{Base: gbase(23, "", -1), HookEventType: HookStop, HookCommand: "true", Success: true},
		"LLMCompletionLogEvent": &LLMCompletionLogEvent{
			Base: gbase(24, "", -1), Filename: "m.json", LogData: `{"x": 1}`, ModelName: "unknown", UsageID: "default",
		},
		"TokenEvent": &TokenEvent{Base: gbase(25, SourceAgent, -1), PromptTokenIDs: List[int]{1, 2}},
		"ACPToolCallEvent": &ACPToolCallEvent{
			Base: gbase(26, "", -1), ToolCallID: "t1", Title: "Edit", Status: "completed", ToolKind: "edit",
			RawInput: json.RawMessage(`{"path":"a"}`), RawOutput: json.RawMessage(`"ok"`),
			Content: json.RawMessage(`[{"type":"diff","oldText":"a"}]`), IsError: true,
		},
		"StreamingDeltaEvent": &StreamingDeltaEvent{Base: gbase(27, "", -1), Content: new(""), ReasoningContent: new("r")},
		"ServerErrorEvent":    &ServerErrorEvent{Base: gbase(28, SourceEnvironment, -1), Code: "MCPError", Detail: "refused"},
		"SecurityAnalysisEvent": &SecurityAnalysisEvent{
			Base: gbase(29, SourceEnvironment, 4), Analyzer: "PatternSecurityAnalyzer", Policy: "ConfirmRisky",
			Risks:   ActionRisks{{ActionID: gid(5), Risk: RiskHigh}, {ActionID: gid(4), Risk: RiskLow}},
			Details: ActionDetails{{ActionID: gid(5), Detail: json.RawMessage(`{"pattern":"curl | sh","score":0.9}`)}},
		},
		"SecurityAnalysisEvent_error": &SecurityAnalysisEvent{
			Base: gbase(30, SourceEnvironment, -1), Analyzer: "LLMSecurityAnalyzer", Policy: "NeverConfirm",
			Risks:   ActionRisks{{ActionID: gid(4), Risk: RiskHigh}},
			Details: ActionDetails{{ActionID: gid(4), Detail: json.RawMessage(`{"error":"analyzer timed out"}`)}},
		},
	}
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

// gohandsKinds are the package's event kinds the reference does not have.
var gohandsKinds = map[string]bool{}

// packageKinds returns the event kinds this package defines.
func packageKinds() []string {
	var out []string
	for _, k := range wire.Kinds() {
		v, _ := wire.NewKind(k)
		if _, ok := v.(Event); ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestGoldenCoversEveryKind(t *testing.T) {
	have := map[string]bool{}
	for _, e := range goldenEvents() {
		k, _ := KindOf(e)
		have[k] = true
	}
	kinds := packageKinds()
	if len(kinds) != 20+len(gohandsKinds) {
		t.Errorf("package registers %d event kinds, want the reference's 20 and gohands' %d: %v", len(kinds), len(gohandsKinds), kinds)
	}
	for _, k := range kinds {
		if !have[k] {
			t.Errorf("no golden value for kind %s", k)
		}
	}
}

func TestGolden(t *testing.T) {
	for name, e := range goldenEvents() {
		t.Run(name, func(t *testing.T) {
			got, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if !golden.Check(t, goldenPath(name), got) {
				t.FailNow()
			}
			want := got
			back, err := Unmarshal(want)
			if err != nil {
				t.Fatalf("Unmarshal(golden): %v", err)
			}
			again, err := Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Fatalf("re-encoding differs\n got: %s\nwant: %s", again, want)
			}
			if reflect.TypeOf(back) != reflect.TypeOf(e) {
				t.Fatalf("decoded %T, want %T", back, e)
			}
			// Decoding fills in what Marshal defaulted; compare with that.
			prepared, err := prepareEvent(e)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(prepared, back, cmpOpts...); diff != "" {
				t.Errorf("decoded value differs (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpOpts = []cmp.Option{
	cmp.AllowUnexported(),
	// A value given as a Go value is decoded as raw JSON: compare encodings.
	cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().Type() == reflect.TypeFor[any]() && strings.HasSuffix(p.GoString(), ".Value")
	}, cmp.Comparer(func(a, b any) bool {
		ja, _ := MarshalJSON(a)
		jb, _ := MarshalJSON(b)
		return bytes.Equal(ja, jb)
	})),
	// nil and empty lists encode alike.
	cmp.FilterValues(func(a, b List[Content]) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore()),
	cmp.FilterValues(func(a, b List[string]) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore()),
	cmp.FilterValues(func(a, b List[int]) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore()),
	cmp.FilterValues(func(a, b List[ThinkingBlock]) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore()),
}

// Three events as the reference stores them on disk, byte for byte.
var referenceExamples = map[string]string{
	"MessageEvent": `{"id":"6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21","timestamp":"2026-08-22T10:15:03.482911",` +
		`"source":"user","parent_id":"0b6e3f2a-1c4d-4e8f-9a7b-5d2c1e0f3a94",` +
		`"llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"List the files in the repo"}],"thinking_blocks":[]},` +
		`"activated_skills":[],"extended_content":[],"kind":"MessageEvent"}`,
	"ActionEvent": `{"id":"a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f","timestamp":"2026-08-22T10:15:07.120044",` +
		`"source":"agent","parent_id":"6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21",` +
		`"thought":[{"cache_prompt":false,"type":"text","text":"I'll list the files first."}],` +
		`"thinking_blocks":[],` +
		`"action":{"command":"ls -la","is_input":false,"reset":false,"kind":"TerminalAction"},` +
		`"tool_name":"terminal","tool_call_id":"call_Q1w2E3r4",` +
		`"tool_call":{"id":"call_Q1w2E3r4","name":"terminal","arguments":"{\"security_risk\": \"LOW\", \"summary\": \"List files in repo root\", \"command\": \"ls -la\"}","origin":"completion"},` +
		`"llm_response_id":"chatcmpl-9f8e7d6c5b4a","security_risk":"UNKNOWN",` +
		`"summary":"List files in repo root","kind":"ActionEvent"}`,
	"ObservationEvent": `{"id":"c3e4f5a6-7b8c-4d9e-0f1a-2b3c4d5e6f70","timestamp":"2026-08-22T10:15:07.388210",` +
		`"source":"environment","parent_id":"a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f",` +
		`"tool_name":"terminal","tool_call_id":"call_Q1w2E3r4",` +
		`"observation":{"content":[{"cache_prompt":false,"type":"text","text":"total 8\ndrwxr-xr-x 2 root root 4096 Aug 22 10:15 .\n"}],` +
		`"is_error":false,"command":"ls -la","exit_code":0,"timeout":false,` +
		`"metadata":{"exit_code":0,"pid":-1,"username":"root","hostname":"sandbox","working_dir":"/workspace/project","prefix":"","suffix":""},` +
		`"full_output_save_dir":"workspace/conversations/8b1f0c2d9e3a4b5c6d7e8f9012345678/observations",` +
		`"kind":"TerminalObservation"},` +
		`"action_id":"a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f","extended_content":[],"kind":"ObservationEvent"}`,
}

func TestReferenceExamples(t *testing.T) {
	built := map[string]Event{
		"MessageEvent": &MessageEvent{
			Base:       Base{ID: "6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21", Timestamp: "2026-08-22T10:15:03.482911", Source: SourceUser, ParentID: "0b6e3f2a-1c4d-4e8f-9a7b-5d2c1e0f3a94"},
			LLMMessage: UserMessage("List the files in the repo"),
		},
		"ActionEvent": &ActionEvent{
			Base:     Base{ID: "a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f", Timestamp: "2026-08-22T10:15:07.120044", Source: SourceAgent, ParentID: "6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21"},
			Thought:  List[Content]{Text("I'll list the files first.")},
			Action:   &terminalAction{Command: "ls -la"},
			ToolName: "terminal", ToolCallID: "call_Q1w2E3r4",
			ToolCall: ToolCall{ID: "call_Q1w2E3r4", Name: "terminal", Origin: OriginCompletion,
				Arguments: `{"security_risk": "LOW", "summary": "List files in repo root", "command": "ls -la"}`},
			LLMResponseID: "chatcmpl-9f8e7d6c5b4a", Summary: "List files in repo root",
		},
		"ObservationEvent": &ObservationEvent{
			Base:     Base{ID: "c3e4f5a6-7b8c-4d9e-0f1a-2b3c4d5e6f70", Timestamp: "2026-08-22T10:15:07.388210", Source: SourceEnvironment, ParentID: "a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f"},
			ToolName: "terminal", ToolCallID: "call_Q1w2E3r4", ActionID: "a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f",
			Observation: &terminalObservation{
				ObservationBase: ObservationBase{Content: List[Content]{Text("total 8\ndrwxr-xr-x 2 root root 4096 Aug 22 10:15 .\n")}},
				Command:         new("ls -la"), ExitCode: new(0),
				Metadata:          cmdOutputMetadata{PID: -1, Username: new("root"), Hostname: new("sandbox"), WorkingDir: new("/workspace/project")},
				FullOutputSaveDir: new("workspace/conversations/8b1f0c2d9e3a4b5c6d7e8f9012345678/observations"),
			},
		},
	}
	for name, want := range referenceExamples {
		t.Run(name, func(t *testing.T) {
			got, err := Marshal(built[name])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("Marshal\n got: %s\nwant: %s", got, want)
			}
			e, err := Unmarshal([]byte(want))
			if err != nil {
				t.Fatal(err)
			}
			again, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != want {
				t.Errorf("round trip\n got: %s\nwant: %s", again, want)
			}
		})
	}
}
