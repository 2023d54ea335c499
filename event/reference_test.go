package event

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/reference holds events written by the Python reference
// (openhands-sdk 1.43.1, model_dump_json(exclude_none=True)) with its real
// classes. Each must decode and re-encode byte for byte, except where the
// reference writes something it cannot read back itself (listed here).
var referenceDifferences = map[string]struct{ from, to string }{
	// TerminalObservation.command is required but nullable. Python drops
	// the null and then rejects its own file ("observation.command: Field
	// required"); we always write the key.
	"ObservationEvent_nullcmd": {`"is_error":true,`, `"is_error":true,"command":null,`},
}

// newIn158 are the event kinds the reference 1.43.1 does not have; their
// fixtures are in testdata/reference158.
var newIn158 = map[string]bool{KindSecurityAnalysis: true}

func TestReferenceFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reference", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d reference fixtures, want at least 30", len(files))
	}
	seen := map[string]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			e, err := Unmarshal(data)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			k, _ := KindOf(e)
			seen[k] = true
			got, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			want := string(data)
			if d, ok := referenceDifferences[name]; ok {
				if !strings.Contains(want, d.from) {
					t.Fatalf("fixture no longer contains %q", d.from)
				}
				want = strings.Replace(want, d.from, d.to, 1)
			}
			if string(got) != want {
				t.Errorf("re-encoding differs\n got: %s\nwant: %s", got, want)
			}
		})
	}
	for _, k := range packageKinds() {
		if !seen[k] && !gohandsKinds[k] && !newIn158[k] {
			t.Errorf("no reference fixture of kind %s", k)
		}
	}
}

func TestStrictness(t *testing.T) {
	const msg = `{"id":"6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21","timestamp":"2026-08-22T10:15:03.482911","source":"user",` +
		`"llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"hi"}],"thinking_blocks":[]},` +
		`"activated_skills":[],"extended_content":[],"kind":"MessageEvent"}`
	tests := []struct {
		name, in string
		wantErr  []string // substrings of the error; nil means it must decode
	}{
		{"valid", msg, nil},
		{"missing kind", strings.Replace(msg, `,"kind":"MessageEvent"`, ``, 1), []string{`no "kind"`}},
		{"unknown event field", strings.Replace(msg, `"source":"user",`, `"source":"user","bogus":1,`, 1), []string{"MessageEvent", `"bogus"`}},
		{"unknown text field", strings.Replace(msg, `"text":"hi"`, `"text":"hi","extra":true`, 1), []string{"TextContent", `"extra"`}},
		{"deprecated text field", strings.Replace(msg, `"text":"hi"`, `"text":"hi","enable_truncation":true`, 1), nil},
		{"message ignores unknown keys", strings.Replace(msg, `"role":"user",`, `"role":"user","vision_enabled":true,"whatever":[1],`, 1), nil},
		{"image ignores unknown keys", strings.Replace(msg, `{"cache_prompt":false,"type":"text","text":"hi"}`, `{"type":"image","image_urls":["https://x"],"detail":"high"}`, 1), nil},
		{"content without type", strings.Replace(msg, `{"cache_prompt":false,"type":"text","text":"hi"}`, `{"text":"hi"}`, 1), nil},
		{"content as a string", strings.Replace(msg, `[{"cache_prompt":false,"type":"text","text":"hi"}]`, `"hi"`, 1), nil},
		{"content null", strings.Replace(msg, `[{"cache_prompt":false,"type":"text","text":"hi"}]`, `null`, 1), nil},
		{"bad role", strings.Replace(msg, `"role":"user"`, `"role":"robot"`, 1), []string{"invalid role", "robot"}},
		{"bad source", strings.Replace(msg, `"source":"user"`, `"source":"martian"`, 1), []string{"invalid source"}},
		{"missing required source", strings.Replace(msg, `"source":"user",`, ``, 1), []string{"missing source"}},
		{"reserved id", strings.Replace(msg, `6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21`, `__root__`, 1), []string{"reserved"}},
		{"image in extended_content", strings.Replace(msg, `"extended_content":[]`, `"extended_content":[{"type":"image","image_urls":[]}]`, 1), []string{"extended_content"}},
		{"kind first", `{"kind":"MessageEvent",` + strings.TrimPrefix(strings.Replace(msg, `,"kind":"MessageEvent"`, ``, 1), `{`), nil},
		{"kind in the middle with spaces", strings.Replace(strings.Replace(msg, `,"kind":"MessageEvent"`, ``, 1), `"source":"user",`, "\"source\" : \"user\" ,\n \"kind\" : \"MessageEvent\" ,\n ", 1), nil},
		{"spaces around kind", strings.Replace(msg, `,"kind":"MessageEvent"}`, ` , "kind" : "MessageEvent" } `, 1), nil},
		{"keys are case-sensitive", strings.Replace(msg, `"source":"user",`, `"source":"user","Source":"agent",`, 1), []string{"MessageEvent", `"Source"`}},
		{"missing required field", strings.Replace(msg, `"llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"hi"}],"thinking_blocks":[]},`, ``, 1), []string{"MessageEvent", `"llm_message"`}},
		{"tool call ignores unknown keys (extra=ignore)", `{"id":"a1","timestamp":"t","source":"agent","thought":[],` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion","future":1},"llm_response_id":"r","kind":"ActionEvent"}`, nil},
		{"integral float for an int", `{"id":"a1","timestamp":"t","hook_event_type":"Stop","hook_command":"x","success":true,"exit_code":2.0,"kind":"HookExecutionEvent"}`, nil},
		{"fractional float for an int", `{"id":"a1","timestamp":"t","hook_event_type":"Stop","hook_command":"x","success":true,"exit_code":2.5,"kind":"HookExecutionEvent"}`, []string{"exit_code"}},
		{"not an object", `[1,2]`, []string{"object"}},
		{"trailing data", msg + `{}`, []string{"event"}},
		{"unknown classification field", `{"id":"a1","timestamp":"t","source":"agent","tool_name":"x","tool_call_id":"c","error":"e",` +
			`"classification":{"kind":"unknown","retryable":false,"oops":1},"kind":"AgentErrorEvent"}`, []string{"AgentErrorEvent", `"oops"`}},
		{"unknown field in action", `{"id":"a1","timestamp":"t","source":"agent","thought":[],"action":{"command":"ls","nope":1,"kind":"TerminalAction"},` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion"},"llm_response_id":"r","kind":"ActionEvent"}`,
			[]string{"TerminalAction", `"nope"`}},
		{"event as an action", `{"id":"a1","timestamp":"t","source":"agent","thought":[],"action":{"id":"x","timestamp":"t","source":"user","kind":"PauseEvent"},` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion"},"llm_response_id":"r","kind":"ActionEvent"}`,
			[]string{"PauseEvent", "not an action"}},
		{"action missing llm_response_id", `{"id":"a1","timestamp":"t","source":"agent","thought":[],` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion"},"kind":"ActionEvent"}`,
			[]string{"llm_response_id"}},
		{"action with a null thought", `{"id":"a1","timestamp":"t","source":"agent","thought":null,` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion"},"llm_response_id":"r","kind":"ActionEvent"}`,
			[]string{"thought", "null"}},
		{"action with a null tool_call", `{"id":"a1","timestamp":"t","source":"agent","thought":[],` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":null,"llm_response_id":"r","kind":"ActionEvent"}`,
			[]string{"tool_call", "null"}},
		{"observation null", `{"id":"o1","timestamp":"t","source":"environment","tool_name":"terminal","tool_call_id":"c",` +
			`"observation":null,"action_id":"a1","kind":"ObservationEvent"}`, []string{"observation", "null"}},
		{"observation of an action kind", `{"id":"o1","timestamp":"t","source":"environment","tool_name":"terminal","tool_call_id":"c",` +
			`"observation":{"command":"ls","kind":"TerminalAction"},"action_id":"a1","kind":"ObservationEvent"}`, []string{"observation", "TerminalAction"}},
		{"bad security risk", `{"id":"a1","timestamp":"t","source":"agent","thought":[],"security_risk":"EXTREME",` +
			`"tool_name":"terminal","tool_call_id":"c","tool_call":{"id":"c","name":"terminal","arguments":"{}","origin":"completion"},"llm_response_id":"r","kind":"ActionEvent"}`,
			[]string{"security_risk"}},
		{"negative summary offset", `{"id":"a1","timestamp":"t","source":"environment","summary_offset":-1,"llm_response_id":"x","kind":"Condensation"}`, []string{"summary_offset"}},
		{"bad hook type", `{"id":"a1","timestamp":"t","hook_event_type":"Sometimes","hook_command":"x","success":true,"exit_code":0,"kind":"HookExecutionEvent"}`, []string{"hook_event_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Unmarshal([]byte(tt.in))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Unmarshal: %v", err)
				}
				if _, err := Marshal(e); err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Unmarshal succeeded, want an error mentioning %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestStrictnessSentinels(t *testing.T) {
	_, err := Unmarshal([]byte(`{"id":"a","timestamp":"t","source":"user","x":1,"kind":"PauseEvent"}`))
	if !errors.Is(err, ErrUnknownField) {
		t.Errorf("unknown field: %v is not ErrUnknownField", err)
	}
}

// Older files keep nulls and lack parent_id and extended_content; the
// reference reads them, and so must we.
func TestOlderFormat(t *testing.T) {
	const old = `{"id":"c3e4f5a6-7b8c-4d9e-0f1a-2b3c4d5e6f70","timestamp":"2026-01-02T03:04:05.000006","source":"environment",` +
		`"tool_name":"terminal","tool_call_id":"call_1","observation":{"content":[{"cache_prompt":false,"type":"text","text":"ok","enable_truncation":true}],` +
		`"is_error":false,"command":"ls","exit_code":0,"timeout":false,"metadata":{"exit_code":0,"pid":-1,"username":null,"hostname":null,` +
		`"working_dir":null,"py_interpreter_path":null,"prefix":"","suffix":""},"full_output_save_dir":null,"kind":"TerminalObservation"},` +
		`"action_id":"a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f","kind":"ObservationEvent"}`
	e, err := Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"c3e4f5a6-7b8c-4d9e-0f1a-2b3c4d5e6f70","timestamp":"2026-01-02T03:04:05.000006","source":"environment",` +
		`"tool_name":"terminal","tool_call_id":"call_1","observation":{"content":[{"cache_prompt":false,"type":"text","text":"ok"}],` +
		`"is_error":false,"command":"ls","exit_code":0,"timeout":false,"metadata":{"exit_code":0,"pid":-1,"prefix":"","suffix":""},` +
		`"kind":"TerminalObservation"},"action_id":"a2d9c7f0-5b1e-4c3a-8f6d-1e2b3c4d5e6f","extended_content":[],"kind":"ObservationEvent"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	const oldMsg = `{"id":"m1","timestamp":"2026-01-02T03:04:05","source":"user","parent_id":null,"llm_message":{"role":"user",` +
		`"content":[{"type":"text","text":"hi"}],"tool_calls":null,"tool_call_id":null,"name":null,"reasoning_content":null,` +
		`"thinking_blocks":[],"responses_reasoning_item":null,"cache_enabled":false,"vision_enabled":false,"function_calling_enabled":false,` +
		`"force_string_serializer":false},"llm_response_id":null,"activated_skills":[],"sender":null,"kind":"MessageEvent"}`
	e, err = Unmarshal([]byte(oldMsg))
	if err != nil {
		t.Fatal(err)
	}
	m := e.(*MessageEvent)
	if m.ParentID != "" || m.LLMMessage.ToolCalls != nil || TextOf(m.LLMMessage.Content) != "hi" {
		t.Errorf("decoded %+v", m)
	}
}

func TestDefaultsOnLoad(t *testing.T) {
	e, err := Unmarshal([]byte(`{"tool_name":"x","tool_call_id":"c","error":"boom","kind":"AgentErrorEvent"}`))
	if err != nil {
		t.Fatal(err)
	}
	a := e.(*AgentErrorEvent)
	if a.Source != SourceAgent || a.Classification != unknownError || a.ID == "" || a.Timestamp == "" {
		t.Errorf("defaults not applied: %+v", a)
	}
	e, err = Unmarshal([]byte(`{"id":"x1","timestamp":"t","source":"environment","code":"LLMAuthenticationError","detail":"rate limit","kind":"ConversationErrorEvent"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := e.(*ConversationErrorEvent).Classification; c == nil || c.Kind != ErrorKindAuth {
		t.Errorf("classification = %+v, want auth (the code wins over the detail)", c)
	}
	e, err = Unmarshal([]byte(`{"id":"x2","timestamp":"t","tool_name":"x","tool_call_id":"c","action_id":"a","kind":"UserRejectObservation"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.(*UserRejectObservation); r.RejectionReason != DefaultRejectionReason || r.RejectionSource != RejectedByUser || r.Source != SourceEnvironment {
		t.Errorf("defaults not applied: %+v", r)
	}
	e, err = Unmarshal([]byte(`{"id":"x3","timestamp":"t","filename":"f","log_data":"{}","kind":"LLMCompletionLogEvent"}`))
	if err != nil {
		t.Fatal(err)
	}
	if l := e.(*LLMCompletionLogEvent); l.ModelName != "unknown" || l.UsageID != "default" {
		t.Errorf("defaults not applied: %+v", l)
	}
	e, err = Unmarshal([]byte(`{"id":"x4","timestamp":"t","kind":"ConversationStateUpdateEvent"}`))
	if err != nil {
		t.Fatal(err)
	}
	if u := e.(*ConversationStateUpdateEvent); u.Key == "" || string(u.Value.(json.RawMessage)) != "{}" {
		t.Errorf("defaults not applied: %+v", u)
	}
}

func TestClassifyError(t *testing.T) {
	tests := []struct {
		code, detail string
		want         ErrorClassification
	}{
		{"MaxBudgetReached", "", quotaError},
		{"KeyError", "rate limit", internalError},
		{"OpenAIError", "Error code: 429", rateLimitError},
		{"OpenAIError", "something odd", transientError},
		{"ValueError", "Invalid API Key provided", authError},
		{"ValueError", "Read TIMEOUT", transientError},
		{"ValueError", "nothing known", unknownError},
		{"LLMContextWindowExceedError", "", AgentActionError},
	}
	for _, tt := range tests {
		if got := ClassifyError(tt.code, tt.detail); got != tt.want {
			t.Errorf("ClassifyError(%q, %q) = %+v, want %+v", tt.code, tt.detail, got, tt.want)
		}
	}
}

func TestMarshalRejectsUnreadableEvents(t *testing.T) {
	for _, e := range []Event{
		&ObservationEvent{Base: NewBase(SourceEnvironment), ToolName: "t", ToolCallID: "c", ActionID: "a"},
		&MessageEvent{Base: Base{ID: "m", Timestamp: "t"}, LLMMessage: UserMessage("hi")},
	} {
		if b, err := Marshal(e); err == nil {
			t.Errorf("Marshal(%T) = %s, want an error", e, b)
		}
	}
}
