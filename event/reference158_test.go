package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/reference158 holds events written by the Python reference
// 1.58.2 (gen.py there) with its real classes: the kinds and fields new
// since 1.43.1. Each decodes to its typed value and re-encodes byte for
// byte, except where the reference writes what it cannot read back.
var reference158Differences = map[string]struct{ from, to string }{
	// CriticResult.message is required but nullable: Python drops the null
	// and then rejects its own file; gohands always writes the key.
	"MessageEvent_critic": {`"critic_result":{"score":0.25}`, `"critic_result":{"score":0.25,"message":null}`},
}

func TestReference158Fixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reference158", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d 1.58.2 fixtures, want at least 10", len(files))
	}
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
			// Every kind of these files that this package registers is
			// decoded as its type (FinishAction is tools/finish's).
			if IsUnknownKind(e) {
				t.Fatalf("decoded as an unknown kind")
			}
			switch e := e.(type) {
			case *ActionEvent:
				if u, ok := e.Action.(*Unknown); ok && u.KindName != "FinishAction" {
					t.Fatalf("action decoded as an unknown kind: %s", u.KindName)
				}
			case *ObservationEvent:
				if IsUnknownKind(e.Observation) {
					t.Fatalf("observation decoded as an unknown kind")
				}
			}
			got, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			want := string(data)
			if d, ok := reference158Differences[name]; ok {
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
}

func TestSecurityAnalysis158(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reference158", "SecurityAnalysisEvent.json"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	s := e.(*SecurityAnalysisEvent)
	if s.Analyzer != "PatternSecurityAnalyzer" || s.Policy != "ConfirmRisky" || len(s.Risks) != 2 ||
		s.Risks[0].Risk != RiskHigh || s.Risks[1].Risk != RiskLow {
		t.Fatalf("decoded %+v", s)
	}
	if d, ok := s.Details.Get(s.Risks[0].ActionID); !ok || !bytes.Contains(d, []byte(`"score":0.9`)) {
		t.Fatalf("details %s", d)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"bad risk", `:"HIGH"`, `:"EXTREME"`, "EXTREME"},
		{"risks missing", `"risks":{"00000003-1111-4222-8333-444455556666":"HIGH","00000002-1111-4222-8333-444455556666":"LOW"},`, ``, "risks"},
		{"detail not an object", `{"matched"`, `[{"matched"`, "details"},
		{"unknown key", `"policy":`, `"bogus":1,"policy":`, "bogus"},
	} {
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if tc.name == "detail not an object" {
			bad = strings.Replace(bad, `"a":null}}}`, `"a":null}}]}`, 1)
		}
		if _, err := Unmarshal([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// gohands wrote SecurityAnalysisEvents of its own form before 1.58; they
// still read, and what the new form has no key for moves to details.
func TestSecurityAnalysisLegacy(t *testing.T) {
	const old = `{"id":"0000001e-1111-4222-8333-444455556666","timestamp":"2026-08-22T10:15:03.482911","source":"environment",` +
		`"analyzer":"RuleSecurityAnalyzer","confirmation_policy":"ConfirmRisky",` +
		`"ratings":[{"action_id":"a1","tool_name":"terminal","security_risk":"HIGH"}],"requires_confirmation":true,` +
		`"error":"boom","kind":"SecurityAnalysisEvent"}`
	e, err := Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"0000001e-1111-4222-8333-444455556666","timestamp":"2026-08-22T10:15:03.482911","source":"environment",` +
		`"analyzer":"RuleSecurityAnalyzer","policy":"ConfirmRisky","risks":{"a1":"HIGH"},` +
		`"details":{"a1":{"error":"boom","requires_confirmation":true,"tool_name":"terminal"}},"kind":"SecurityAnalysisEvent"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A kind this build does not know (a newer reference's) is kept and
// written back byte for byte, wherever the place allows it: a whole event,
// an action, an observation. The observation's content still reaches the
// model.
func TestUnknownKindsKept(t *testing.T) {
	cases := map[string]string{
		"event": `{"id":"0000001f-1111-4222-8333-444455556666","timestamp":"2026-12-01T10:00:00.000001","source":"agent",` +
			`"parent_id":"00000001-1111-4222-8333-444455556666","future":{"deep":[1,2.0,"é\u0000"]},"kind":"FutureEvent"}`,
		"action": `{"id":"a1","timestamp":"t","source":"agent","thought":[],"thinking_blocks":[],"action":{"query":"x","n":1.50,"kind":"FutureAction"},` +
			`"tool_name":"future","tool_call_id":"c","tool_call":{"id":"c","name":"future","arguments":"{}","origin":"completion"},` +
			`"llm_response_id":"r","security_risk":"UNKNOWN","kind":"ActionEvent"}`,
		"observation": `{"id":"o1","timestamp":"t","source":"environment","tool_name":"future","tool_call_id":"c",` +
			`"observation":{"content":[{"cache_prompt":false,"type":"text","text":"42"}],"is_error":true,"extra":{"k":[]},"kind":"FutureObservation"},` +
			`"action_id":"a1","extended_content":[],"kind":"ObservationEvent"}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := Unmarshal([]byte(in))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			got, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != in {
				t.Errorf("re-encoding differs\n got: %s\nwant: %s", got, in)
			}
			// encoding/json users get the same bytes.
			std, err := json.Marshal(e)
			if err != nil || !bytes.Equal(std, got) {
				t.Errorf("json.Marshal = %s, %v", std, err)
			}
			switch name {
			case "event":
				u, ok := e.(*UnknownEvent)
				if !ok || u.KindName != "FutureEvent" || u.EventBase().ID != "0000001f-1111-4222-8333-444455556666" ||
					u.EventBase().ParentID != "00000001-1111-4222-8333-444455556666" || u.EventBase().Source != SourceAgent {
					t.Fatalf("decoded %#v", e)
				}
			case "action":
				if u, ok := e.(*ActionEvent).Action.(*Unknown); !ok || u.KindName != "FutureAction" {
					t.Fatalf("action %#v", e.(*ActionEvent).Action)
				}
			case "observation":
				o := e.(*ObservationEvent).Observation
				if _, ok := o.(*UnknownObservation); !ok {
					t.Fatalf("observation %#v", o)
				}
				c := ObservationContent(o)
				if len(c) != 2 || c[1].Text != "42" {
					t.Fatalf("model sees %#v", c)
				}
			}
		})
	}
	// What must still be refused: an unknown event without an id, and
	// broken JSON inside an unknown kind.
	for _, bad := range []string{
		`{"timestamp":"t","source":"agent","kind":"FutureEvent"}`,
		`{"id":"__root__","source":"agent","kind":"FutureEvent"}`,
		`{"id":"x","source":"martian","kind":"FutureEvent"}`,
		`{"id":"x","source":"agent","v":[1,,2],"kind":"FutureEvent"}`,
		`{"id":"x","source":"agent","v":[1,2],"kind":"FutureEvent"`,
	} {
		if e, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("%s: decoded %#v, want an error", bad, e)
		}
	}
	// A place typed by an interface with methods of its own still refuses.
	type holder struct {
		Obs []Observation `json:"items"`
	}
	var h struct {
		K Kinded `json:"k"`
	}
	if err := UnmarshalJSON([]byte(`{"k":{"kind":"Nope"}}`), &h); err != nil {
		t.Errorf("Kinded field: %v", err)
	}
	_ = holder{}
	if _, err := DecodeKinded[*MessageEvent]([]byte(`{"id":"x","kind":"Nope"}`)); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("concrete type: %v is not ErrUnknownKind", err)
	}
}
