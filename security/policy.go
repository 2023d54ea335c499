// Package security holds confirmation policies and security analyzers: what
// decides whether an action runs at once or waits for the user.
package security

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gohands/gohands/event"
)

// ConfirmationPolicy decides whether an action of a given risk must be
// confirmed by the user before it runs. Policies are immutable values of a
// registered kind, so they persist in a conversation's state.
type ConfirmationPolicy interface {
	ShouldConfirm(risk event.SecurityRisk) bool
}

// NeverConfirm runs every action without asking. It is the default policy.
type NeverConfirm struct{}

// ShouldConfirm implements ConfirmationPolicy.
func (NeverConfirm) ShouldConfirm(event.SecurityRisk) bool { return false }

// AlwaysConfirm asks before every action.
type AlwaysConfirm struct{}

// ShouldConfirm implements ConfirmationPolicy.
func (AlwaysConfirm) ShouldConfirm(event.SecurityRisk) bool { return true }

// ConfirmRisky asks before actions whose risk is at least Threshold, and
// before actions of unknown risk when ConfirmUnknown is set. Use
// NewConfirmRisky for the reference's defaults (HIGH, confirm unknown).
type ConfirmRisky struct {
	Threshold      event.SecurityRisk `json:"threshold"`
	ConfirmUnknown bool               `json:"confirm_unknown"`
}

// NewConfirmRisky returns the default risky-action policy: confirm HIGH and
// UNKNOWN risks.
func NewConfirmRisky() *ConfirmRisky {
	return &ConfirmRisky{Threshold: event.RiskHigh, ConfirmUnknown: true}
}

// ShouldConfirm implements ConfirmationPolicy. A risk that is not one of the
// four levels is treated as unknown.
func (p *ConfirmRisky) ShouldConfirm(risk event.SecurityRisk) bool {
	r, ok := riskRank(risk)
	if !ok {
		return p.ConfirmUnknown
	}
	t, ok := riskRank(p.threshold())
	if !ok { // unreachable for validated policies; be safe
		return true
	}
	return r >= t
}

func (p *ConfirmRisky) threshold() event.SecurityRisk {
	if p.Threshold == "" {
		return event.RiskHigh
	}
	return p.Threshold
}

// Validate reports whether the policy is usable: the threshold must be LOW,
// MEDIUM or HIGH.
func (p *ConfirmRisky) Validate() error {
	if _, ok := riskRank(p.threshold()); !ok {
		return fmt.Errorf("security: ConfirmRisky threshold must be LOW, MEDIUM or HIGH, not %q", p.Threshold)
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: missing fields take the
// reference's defaults and an invalid threshold is an error.
func (p *ConfirmRisky) UnmarshalJSON(data []byte) error {
	type plain ConfirmRisky
	v := struct {
		plain
		Kind string `json:"kind"` // the kind registry may pass it along
	}{plain: plain(*NewConfirmRisky())}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if v.Kind != "" && v.Kind != "ConfirmRisky" {
		return fmt.Errorf("security: kind %q is not ConfirmRisky", v.Kind)
	}
	*p = ConfirmRisky(v.plain)
	return p.Validate()
}

// riskRank orders the concrete risk levels; UNKNOWN has no rank.
func riskRank(r event.SecurityRisk) (int, bool) {
	switch r {
	case event.RiskLow:
		return 1, true
	case event.RiskMedium:
		return 2, true
	case event.RiskHigh:
		return 3, true
	}
	return 0, false
}

func init() {
	event.RegisterKind[NeverConfirm]("NeverConfirm")
	event.RegisterKind[AlwaysConfirm]("AlwaysConfirm")
	event.RegisterKind[ConfirmRisky]("ConfirmRisky")
}
