package tool

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
)

// SplitMeta removes the meta-arguments (see Parameters) from args, the
// model's arguments to t, and returns the tool's own arguments, the
// security risk and the summary.
//
// security_risk is always removed. It is honoured only when honourRisk is
// set (the conversation has a security analyzer) and t is not read-only;
// otherwise, or when absent, the risk is UNKNOWN and the value is not
// looked at, as in the reference. An honoured value must be one of
// UNKNOWN, LOW, MEDIUM, HIGH (any letter case; the reference accepts only
// upper case) or SplitMeta returns a *FieldError.
//
// summary is removed unless t has its own "summary" argument, in which case
// it is left for the tool and also used as the summary. A missing or blank
// summary is replaced by "<tool name>: <arguments as JSON>".
func SplitMeta(args json.RawMessage, t Tool, honourRisk bool) (clean json.RawMessage, risk event.SecurityRisk, summary string, err error) {
	o, err := parseObject(args)
	if err != nil {
		return nil, "", "", &FieldError{Msg: fmt.Sprintf("arguments must be a JSON object: %v", err)}
	}
	risk = event.RiskUnknown
	if raw, ok := o.pop(MetaSecurityRisk); ok && honourRisk && !ReadOnly(t) && !isNullRaw(raw) {
		s, _ := rawString(raw)
		r := event.SecurityRisk(strings.ToUpper(strings.TrimSpace(s)))
		if !r.Valid() {
			var v any
			_ = json.Unmarshal(raw, &v)
			return nil, "", "", &FieldError{Field: MetaSecurityRisk,
				Msg: fmt.Sprintf("field %q: %s is not one of [UNKNOWN LOW MEDIUM HIGH]", MetaSecurityRisk, shortJSON(v))}
		}
		risk = r
	}
	if HasOwnSummary(t) {
		raw, _ := o.get(MetaSummary)
		if s, ok := rawString(raw); ok && strings.TrimSpace(s) != "" {
			summary = strings.TrimSpace(s)
		}
	} else if raw, ok := o.pop(MetaSummary); ok {
		if s, ok := rawString(raw); ok && strings.TrimSpace(s) != "" {
			summary = s
		}
	}
	clean = o.marshal()
	if summary == "" {
		summary = t.Name() + ": " + pyJSON(clean)
		if len(summary) > maxGeneratedSummary {
			// The reference keeps all of it: large arguments would be
			// stored a second time in the event.
			cut := maxGeneratedSummary
			for cut > 0 && !utf8.RuneStart(summary[cut]) {
				cut--
			}
			summary = summary[:cut] + "…"
		}
	}
	return clean, risk, summary, nil
}

// maxGeneratedSummary bounds the summary made from the arguments when the
// model gives none.
const maxGeneratedSummary = 500
