package security

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"sync"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// Pattern is one entry of the reference's PatternSecurityAnalyzer lists: a
// regular expression, what it detects and a detector id; on the wire a
// JSON array of the three strings.
type Pattern [3]string

// patternCache holds the compiled patterns by their source; a pattern Go's
// regexp cannot compile (Python syntax such as a lookahead) is nil, logged
// once and skipped.
var patternCache sync.Map // string → *regexp.Regexp

func compiled(p string) *regexp.Regexp {
	if re, ok := patternCache.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile("(?i)" + p)
	if err != nil {
		slog.Warn("security: skipping a pattern Go cannot compile", "pattern", p, "err", err)
		re = nil
	}
	patternCache.Store(p, re)
	return re
}

func anyMatch(ps []Pattern, text string) bool {
	if text == "" {
		return false
	}
	for _, p := range ps {
		if re := compiled(p[0]); re != nil && re.MatchString(text) {
			return true
		}
	}
	return false
}

// patternRisk rates in with r's pattern lists: HIGH, MEDIUM, or LOW when
// none matches (or there are none).
func (r *RuleAnalyzer) patternRisk(in *Input) event.SecurityRisk {
	switch {
	case anyMatch(r.HighPatterns, in.Script), anyMatch(r.InjectionHighPatterns, in.Text):
		return event.RiskHigh
	case anyMatch(r.MediumPatterns, in.Script), anyMatch(r.InjectionMediumPatterns, in.Text):
		return event.RiskMedium
	}
	return event.RiskLow
}

// PolicyRailAnalyzer is the reference's PolicyRailSecurityAnalyzer: rails
// on the structure of shell commands only (fetch piped to execution, raw
// disk writes, catastrophic deletes), never on the model's prose. gohands
// rates it with the shell rules of its RuleAnalyzer: HIGH when a HIGH rule
// matches the command, LOW otherwise.
type PolicyRailAnalyzer struct{}

// SecurityRisk implements Analyzer.
func (PolicyRailAnalyzer) SecurityRisk(ctx context.Context, a *event.ActionEvent) (event.SecurityRisk, error) {
	var r RuleAnalyzer
	in, err := r.Input(a)
	if err != nil {
		return event.RiskHigh, err
	}
	if in.Script == "" {
		return event.RiskLow, nil
	}
	// Only the command: the rails never read the prose around it.
	in.Text = in.Script
	for _, rule := range r.Matches(in) {
		if rule.Risk == event.RiskHigh {
			return event.RiskHigh, nil
		}
	}
	return event.RiskLow, nil
}

// GraySwanAnalyzer is the reference's GraySwanAnalyzer: it asks GraySwan's
// hosted monitor (APIURL) to rate the conversation. gohands keeps its
// configuration, field for field, so a conversation that uses it loads and
// is written back unchanged, but does not call the service: every action
// is rated UNKNOWN, which ConfirmRisky (confirm_unknown) confirms, as the
// reference does when it has no API key.
type GraySwanAnalyzer struct {
	HistoryLimit    int           `json:"history_limit"`
	MaxMessageChars int           `json:"max_message_chars"`
	Timeout         float64       `json:"timeout"`
	LowThreshold    float64       `json:"low_threshold"`
	MediumThreshold float64       `json:"medium_threshold"`
	APIURL          string        `json:"api_url"`
	APIKey          secret.String `json:"api_key"`
	PolicyID        string        `json:"policy_id,omitempty"`
}

// SetDefaults gives the reference's defaults.
func (g *GraySwanAnalyzer) SetDefaults() {
	*g = GraySwanAnalyzer{HistoryLimit: 20, MaxMessageChars: 30000, Timeout: 30, LowThreshold: 0.3,
		MediumThreshold: 0.7, APIURL: "https://api.grayswan.ai/cygnal/monitor"}
}

// errGraySwan is why a GraySwanAnalyzer rates UNKNOWN.
var errGraySwan = errors.New("security: gohands does not call the GraySwan service; the action is rated UNKNOWN")

// SecurityRisk implements Analyzer.
func (g *GraySwanAnalyzer) SecurityRisk(context.Context, *event.ActionEvent) (event.SecurityRisk, error) {
	graySwanOnce.Do(func() { slog.Warn(errGraySwan.Error()) })
	return event.RiskUnknown, nil
}

var graySwanOnce sync.Once

func init() {
	event.RegisterKind[PolicyRailAnalyzer]("PolicyRailSecurityAnalyzer")
	event.RegisterKind[GraySwanAnalyzer]("GraySwanAnalyzer")
}

// UnknownAnalyzer is a security analyzer of a kind this build does not
// know (a newer reference's, or one gohands does not implement such as
// ToolShieldLLMSecurityAnalyzer). A conversation that uses it loads and is
// written back with it unchanged; it rates every action UNKNOWN, which
// ConfirmRisky (confirm_unknown) confirms.
type UnknownAnalyzer struct{ *event.Unknown }

// SecurityRisk implements Analyzer.
func (UnknownAnalyzer) SecurityRisk(context.Context, *event.ActionEvent) (event.SecurityRisk, error) {
	return event.RiskUnknown, nil
}

// UnknownPolicy is a confirmation policy of a kind this build does not
// know, kept as read; it asks to confirm every action, the safe choice.
type UnknownPolicy struct{ *event.Unknown }

// ShouldConfirm implements ConfirmationPolicy.
func (UnknownPolicy) ShouldConfirm(event.SecurityRisk) bool { return true }

func init() {
	event.RegisterUnknown(func(u *event.Unknown) Analyzer { return UnknownAnalyzer{u} })
	event.RegisterUnknown(func(u *event.Unknown) ConfirmationPolicy { return UnknownPolicy{u} })
}
