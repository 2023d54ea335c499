package security

import (
	"errors"
	"testing"

	"github.com/gohands/gohands/event"
)

func TestShouldConfirm(t *testing.T) {
	risks := []event.SecurityRisk{event.RiskUnknown, event.RiskLow, event.RiskMedium, event.RiskHigh}
	cases := []struct {
		p    ConfirmationPolicy
		want []bool // per risk, in the order above
	}{
		{NeverConfirm{}, []bool{false, false, false, false}},
		{AlwaysConfirm{}, []bool{true, true, true, true}},
		{NewConfirmRisky(), []bool{true, false, false, true}},
		{&ConfirmRisky{Threshold: event.RiskMedium}, []bool{false, false, true, true}},
		{&ConfirmRisky{Threshold: event.RiskLow, ConfirmUnknown: true}, []bool{true, true, true, true}},
	}
	for _, c := range cases {
		for i, r := range risks {
			if got := c.p.ShouldConfirm(r); got != c.want[i] {
				t.Errorf("%#v.ShouldConfirm(%s) = %v, want %v", c.p, r, got, c.want[i])
			}
		}
	}
}

func TestPolicyJSON(t *testing.T) {
	for _, c := range []struct {
		p    ConfirmationPolicy
		want string
	}{
		{&NeverConfirm{}, `{"kind":"NeverConfirm"}`},
		{&AlwaysConfirm{}, `{"kind":"AlwaysConfirm"}`},
		{NewConfirmRisky(), `{"threshold":"HIGH","confirm_unknown":true,"kind":"ConfirmRisky"}`},
	} {
		b, err := event.MarshalKinded(c.p)
		if err != nil || string(b) != c.want {
			t.Errorf("MarshalKinded(%#v) = %s, %v; want %s", c.p, b, err, c.want)
			continue
		}
		back, err := event.DecodeKinded[ConfirmationPolicy](b)
		if err != nil {
			t.Fatalf("DecodeKinded(%s): %v", b, err)
		}
		if b2, _ := event.MarshalKinded(back); string(b2) != c.want {
			t.Errorf("round trip %s -> %s", c.want, b2)
		}
	}
	// Defaults fill missing fields, as in the reference.
	p, err := event.DecodeKinded[ConfirmationPolicy]([]byte(`{"kind":"ConfirmRisky"}`))
	if err != nil || *p.(*ConfirmRisky) != *NewConfirmRisky() {
		t.Fatalf("defaults: %#v, %v", p, err)
	}
	if _, err := event.DecodeKinded[ConfirmationPolicy]([]byte(`{"threshold":"UNKNOWN","kind":"ConfirmRisky"}`)); err == nil {
		t.Error("accepted an UNKNOWN threshold")
	}
	// A kind this build does not know is kept, written back as read, and
	// confirms everything.
	const sometimes = `{"every":3,"kind":"SometimesConfirm"}`
	u, err := event.DecodeKinded[ConfirmationPolicy]([]byte(sometimes))
	if err != nil || !event.IsUnknownKind(u) || !u.ShouldConfirm(event.RiskLow) {
		t.Errorf("unknown kind: %#v, %v", u, err)
	}
	if b, _ := event.MarshalKinded(u); string(b) != sometimes {
		t.Errorf("unknown kind written as %s", b)
	}
	a, err := event.DecodeKinded[Analyzer]([]byte(`{"llm":{"model":"x"},"kind":"ToolShieldLLMSecurityAnalyzer"}`))
	if err != nil || !event.IsUnknownKind(a) {
		t.Fatalf("unknown analyzer: %#v, %v", a, err)
	}
	if r, _ := a.SecurityRisk(t.Context(), nil); r != event.RiskUnknown {
		t.Errorf("unknown analyzer rates %s", r)
	}
	if _, err := event.DecodeKinded[*ConfirmRisky]([]byte(`{"kind":"SometimesConfirm"}`)); !errors.Is(err, event.ErrUnknownKind) {
		t.Errorf("a concrete type: err = %v", err)
	}
}
