package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gohands/gohands/internal/wire"
)

// ActionRisk is one action's risk in a SecurityAnalysisEvent.
type ActionRisk struct {
	ActionID string
	Risk     SecurityRisk
}

// ActionRisks is the reference's dict[EventID, SecurityRisk]: a JSON object
// by action id, kept in order (Python's dicts are ordered, so a file
// round-trips byte for byte).
type ActionRisks []ActionRisk

// Get returns the risk of action id.
func (r ActionRisks) Get(id string) (SecurityRisk, bool) {
	for _, x := range r {
		if x.ActionID == id {
			return x.Risk, true
		}
	}
	return "", false
}

// AppendJSON implements JSONAppender.
func (r ActionRisks) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, x := range r {
		if !x.Risk.Valid() {
			return nil, fmt.Errorf("risks: action %s: invalid security risk %q", x.ActionID, x.Risk)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, x.ActionID)
		b = append(b, ':')
		b = wire.AppendString(b, string(x.Risk))
	}
	return append(b, '}'), nil
}

// MarshalJSON implements json.Marshaler.
func (r ActionRisks) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// UnmarshalJSON implements json.Unmarshaler.
func (r *ActionRisks) UnmarshalJSON(data []byte) error {
	out := ActionRisks{}
	err := decodeOrderedObject(data, func(key string, val json.RawMessage) error {
		var risk SecurityRisk
		if err := UnmarshalJSON(val, (*string)(&risk)); err != nil {
			return err
		}
		if !risk.Valid() {
			return fmt.Errorf("invalid security risk %q", risk)
		}
		out = append(out, ActionRisk{ActionID: key, Risk: risk})
		return nil
	})
	if err != nil {
		return fmt.Errorf("risks: %w", err)
	}
	*r = out
	return nil
}

// ActionDetail is one action's analyzer-specific detail: a JSON object.
type ActionDetail struct {
	ActionID string
	Detail   json.RawMessage
}

// ActionDetails is the reference's dict[EventID, dict[str, Any]], kept in
// order, each detail verbatim.
type ActionDetails []ActionDetail

// Get returns the detail of action id.
func (d ActionDetails) Get(id string) (json.RawMessage, bool) {
	for _, x := range d {
		if x.ActionID == id {
			return x.Detail, true
		}
	}
	return nil, false
}

// AppendJSON implements JSONAppender.
func (d ActionDetails) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, x := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, x.ActionID)
		b = append(b, ':')
		if len(x.Detail) == 0 {
			b = append(b, "{}"...)
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, x.Detail); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
			return nil, fmt.Errorf("details: action %s: not a JSON object", x.ActionID)
		}
		b = append(b, buf.Bytes()...)
	}
	return append(b, '}'), nil
}

// MarshalJSON implements json.Marshaler.
func (d ActionDetails) MarshalJSON() ([]byte, error) { return d.AppendJSON(nil) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *ActionDetails) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		*d = nil
		return nil
	}
	out := ActionDetails{}
	err := decodeOrderedObject(data, func(key string, val json.RawMessage) error {
		if v := bytes.TrimSpace(val); len(v) == 0 || v[0] != '{' {
			return errors.New("not a JSON object")
		}
		out = append(out, ActionDetail{ActionID: key, Detail: bytes.Clone(val)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("details: %w", err)
	}
	*d = out
	return nil
}

// decodeOrderedObject calls f with each key and raw value of the JSON
// object data, in order.
func decodeOrderedObject(data []byte, f func(key string, val json.RawMessage) error) error {
	d := &wire.Decoder{Data: data}
	d.SkipSpace()
	if c, err := d.Peek(); err != nil {
		return err
	} else if c != '{' {
		return d.Errorf("expected an object")
	}
	err := d.Object(func(key []byte) error {
		val, err := d.Skip()
		if err != nil {
			return err
		}
		if err := f(string(key), val); err != nil {
			return fmt.Errorf("%s: %w", strconv.Quote(string(key)), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos != len(d.Data) {
		return d.Errorf("data after the object")
	}
	return nil
}

func (e *SecurityAnalysisEvent) decodeKind(kind string, data []byte) error {
	err := decodeEvent(e, kind, data, nil)
	if errors.Is(err, ErrUnknownField) && hasKey(data, "ratings") {
		*e = SecurityAnalysisEvent{}
		return decodeEvent(e, kind, data, func() error { return e.decodeLegacy(kind, data) })
	}
	return err
}

// decodeLegacy reads the SecurityAnalysisEvent gohands wrote before the
// reference had the kind: each rating becomes a risk, and what the new form
// has no key for (the tool's name, whether the policy asked to confirm,
// the analyzer's failure) becomes the action's detail, so nothing is lost.
func (e *SecurityAnalysisEvent) decodeLegacy(kind string, data []byte) error {
	var old struct {
		Base
		Analyzer string `json:"analyzer"`
		Policy   string `json:"confirmation_policy"`
		Ratings  []struct {
			ActionID     string       `json:"action_id"`
			ToolName     string       `json:"tool_name"`
			SecurityRisk SecurityRisk `json:"security_risk"`
		} `json:"ratings"`
		RequiresConfirmation bool    `json:"requires_confirmation"`
		Error                *string `json:"error,omitempty"`
	}
	old.Base = e.Base
	if err := wire.DecodeKind(data, kind, &old); err != nil {
		return err
	}
	*e = SecurityAnalysisEvent{Base: old.Base, Analyzer: old.Analyzer, Policy: old.Policy, Risks: ActionRisks{}}
	for _, r := range old.Ratings {
		if !r.SecurityRisk.Valid() {
			return fmt.Errorf("ratings: invalid security risk %q", r.SecurityRisk)
		}
		e.Risks = append(e.Risks, ActionRisk{ActionID: r.ActionID, Risk: r.SecurityRisk})
		detail := map[string]any{"tool_name": r.ToolName, "requires_confirmation": old.RequiresConfirmation}
		if old.Error != nil {
			detail["error"] = *old.Error
		}
		raw, err := MarshalJSON(detail)
		if err != nil {
			return err
		}
		e.Details = append(e.Details, ActionDetail{ActionID: r.ActionID, Detail: raw})
	}
	return nil
}

// hasKey reports whether the JSON object data has key at its top level.
func hasKey(data []byte, key string) bool {
	found := false
	_ = decodeOrderedObject(data, func(k string, _ json.RawMessage) error {
		found = found || k == key
		return nil
	})
	return found
}

func (e *SecurityAnalysisEvent) validate() error {
	if e.Risks == nil {
		return errors.New(`missing "risks"`)
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *SecurityAnalysisEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindSecurityAnalysis, data)
}

// MarshalJSON implements json.Marshaler.
func (e *SecurityAnalysisEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }
