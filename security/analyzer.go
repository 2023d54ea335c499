package security

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/gohands/gohands/event"
)

// Analyzer rates the risk of one action before it runs.
type Analyzer interface {
	SecurityRisk(ctx context.Context, action *event.ActionEvent) (event.SecurityRisk, error)
}

// BatchAnalyzer is implemented by analyzers that rate a batch of actions
// in one call; Rate uses it when it is there.
type BatchAnalyzer interface {
	Analyzer
	AnalyzeActions(ctx context.Context, actions []*event.ActionEvent) ([]event.SecurityRisk, error)
}

// Binding is what an analyzer may take from the conversation it rates
// actions for.
type Binding struct {
	WorkDir     string   // the conversation's workspace
	SecretNames []string // the names of its secrets
}

// Binder is implemented by analyzers that use the conversation's
// workspace or secret names. Bind returns a copy with them filled in where
// the analyzer leaves them empty; the receiver is not changed.
type Binder interface {
	Bind(b Binding) Analyzer
}

// Bind returns a bound to b when a is a Binder, a itself otherwise.
func Bind(a Analyzer, b Binding) Analyzer {
	if x, ok := a.(Binder); ok {
		return x.Bind(b)
	}
	return a
}

// Rate rates actions with a: in one call when a is a BatchAnalyzer,
// action by action with AnalyzeAll otherwise. It returns one risk per
// action.
func Rate(ctx context.Context, a Analyzer, actions []*event.ActionEvent) ([]event.SecurityRisk, error) {
	if b, ok := a.(BatchAnalyzer); ok {
		return b.AnalyzeActions(ctx, actions)
	}
	return AnalyzeAll(ctx, a, actions), nil
}

// AnalyzeAll rates every action with a. An action whose rating fails, panics
// or is not one of the four levels is rated HIGH: a broken analyzer must not
// let an action through unchecked.
func AnalyzeAll(ctx context.Context, a Analyzer, actions []*event.ActionEvent) []event.SecurityRisk {
	risks := make([]event.SecurityRisk, len(actions))
	for i, act := range actions {
		risks[i] = safeRisk(ctx, a, act)
	}
	return risks
}

func safeRisk(ctx context.Context, a Analyzer, act *event.ActionEvent) (risk event.SecurityRisk) {
	defer func() {
		if p := recover(); p != nil {
			slog.Warn("security analyzer panicked; rating the action HIGH", "panic", p)
			risk = event.RiskHigh
		}
	}()
	r, err := a.SecurityRisk(ctx, act)
	if err != nil {
		slog.Warn("security analyzer failed; rating the action HIGH", "err", err)
		return event.RiskHigh
	}
	if !r.Valid() || r == "" {
		return event.RiskHigh
	}
	return r
}

// Higher returns the riskier of two concrete risks; UNKNOWN loses to any
// concrete risk.
func Higher(a, b event.SecurityRisk) event.SecurityRisk {
	ra, oka := riskRank(a)
	rb, okb := riskRank(b)
	switch {
	case !oka:
		return b
	case !okb:
		return a
	case rb > ra:
		return b
	}
	return a
}

// LLMAnalyzer trusts the security_risk the model stated in its tool call
// (kind "LLMSecurityAnalyzer"). A missing or invalid value is UNKNOWN.
type LLMAnalyzer struct{}

// SecurityRisk implements Analyzer.
func (LLMAnalyzer) SecurityRisk(_ context.Context, a *event.ActionEvent) (event.SecurityRisk, error) {
	if a == nil || !a.SecurityRisk.Valid() {
		return event.RiskUnknown, nil
	}
	return a.SecurityRisk, nil
}

// RuleAnalyzer rates actions with a table of rules (DefaultRules plus
// Extra), ignoring what the model claims. It is persisted as the
// reference's PatternSecurityAnalyzer, the same idea (a fixed set of
// dangerous shapes, the model's claim ignored): the reference loads a state
// that uses it and rates with its own patterns, and gohands reads the
// reference's with its pattern lists kept, rating with both (see
// patterns.go). gohands wrote it as "RuleSecurityAnalyzer" before; that
// kind still reads.
//
// The result is the highest risk of the matching rules and patterns, or
// LOW when none matches.
type RuleAnalyzer struct {
	// The reference's pattern lists (regex, description, detector id),
	// kept as read and matched case-insensitively: High and Medium against
	// the shell command, InjectionHigh and InjectionMedium against all the
	// action's text. Empty, only the rules apply (and the reference, reading
	// the analyzer, uses its default lists).
	HighPatterns            []Pattern `json:"high_patterns,omitempty"`
	MediumPatterns          []Pattern `json:"medium_patterns,omitempty"`
	InjectionHighPatterns   []Pattern `json:"injection_high_patterns,omitempty"`
	InjectionMediumPatterns []Pattern `json:"injection_medium_patterns,omitempty"`
	// WorkDir is the workspace; writes outside it are MEDIUM. Empty
	// disables that rule.
	WorkDir string `json:"work_dir,omitempty"`
	// SecretNames are environment variable names holding secrets; sending
	// them over the network is HIGH.
	SecretNames []string `json:"secret_names,omitempty"`
	// Extra rules are checked after DefaultRules. They are code, so they
	// are not persisted.
	Extra []Rule `json:"-"`
}

// SecurityRisk implements Analyzer.
func (r *RuleAnalyzer) SecurityRisk(_ context.Context, a *event.ActionEvent) (event.SecurityRisk, error) {
	in, err := r.Input(a)
	if err != nil {
		return event.RiskHigh, err
	}
	risk := event.RiskLow
	for _, rule := range r.Matches(in) {
		risk = Higher(risk, rule.Risk)
	}
	return Higher(risk, r.patternRisk(in)), nil
}

// Bind implements Binder: the copy rates writes outside b.WorkDir and
// sending b's secrets unless r names its own.
func (r *RuleAnalyzer) Bind(b Binding) Analyzer {
	if r == nil {
		return r
	}
	c := *r
	if c.WorkDir == "" {
		c.WorkDir = b.WorkDir
	}
	if len(c.SecretNames) == 0 {
		c.SecretNames = b.SecretNames
	}
	return &c
}

// Matches returns the rules that match in, in table order.
func (r *RuleAnalyzer) Matches(in *Input) []*Rule {
	var out []*Rule
	for _, rules := range [][]Rule{defaultRules(), r.Extra} {
		for i := range rules {
			if rules[i].matches(in) {
				out = append(out, &rules[i])
			}
		}
	}
	return out
}

// Input builds what the rules see of an action: its decoded arguments,
// and for terminal actions the parsed shell commands, all normalised.
func (r *RuleAnalyzer) Input(a *event.ActionEvent) (*Input, error) {
	if a == nil {
		return nil, fmt.Errorf("security: nil action")
	}
	raw := a.ToolCall.Arguments
	if raw == "" && a.Action != nil {
		b, err := json.Marshal(a.Action)
		if err != nil {
			return nil, fmt.Errorf("security: encoding action of %s: %w", a.ToolName, err)
		}
		raw = string(b)
	}
	in := &Input{Tool: a.ToolName, WorkDir: r.WorkDir, SecretNames: r.SecretNames}
	var args any
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			// Unparseable arguments are still scanned as text.
			args = raw
		}
	}
	in.Args, _ = args.(map[string]any)
	var text []string
	collectStrings(args, &text)
	text = append(text, a.ToolName, a.Summary, a.ReasoningContent)
	for _, c := range a.Thought {
		if c.Type == event.ContentText {
			text = append(text, c.Text)
		}
	}
	in.Text = Normalize(strings.Join(text, "\n"))
	if cmd, ok := in.Args["command"].(string); ok && isShellTool(a.ToolName) {
		in.Script = Normalize(cmd)
		in.Commands = parseShell(in.Script)
	}
	return in, nil
}

func isShellTool(name string) bool {
	switch name {
	case "terminal", "bash", "execute_bash", "shell":
		return true
	}
	return false
}

// collectStrings appends every string leaf of v, map keys in sorted order.
func collectStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectStrings(v[k], out)
		}
	}
}

// Ensemble combines analyzers (kind "EnsembleSecurityAnalyzer"): the
// result is the highest concrete risk, UNKNOWN only when every analyzer
// says UNKNOWN, or with PropagateUnknown when any does. A failing member
// counts as HIGH.
type Ensemble struct {
	Analyzers        []Analyzer `json:"analyzers" wire:"emitempty"`
	PropagateUnknown bool       `json:"propagate_unknown"`
}

// SecurityRisk implements Analyzer.
func (e *Ensemble) SecurityRisk(ctx context.Context, a *event.ActionEvent) (event.SecurityRisk, error) {
	risk := event.RiskUnknown
	for _, an := range e.Analyzers {
		r := safeRisk(ctx, an, a)
		if r == event.RiskUnknown && e.PropagateUnknown {
			return event.RiskUnknown, nil
		}
		risk = Higher(risk, r)
	}
	return risk, nil
}

// Bind implements Binder: the copy has each member bound to b.
func (e *Ensemble) Bind(b Binding) Analyzer {
	if e == nil {
		return e
	}
	c := *e
	c.Analyzers = make([]Analyzer, len(e.Analyzers))
	for i, a := range e.Analyzers {
		c.Analyzers[i] = Bind(a, b)
	}
	return &c
}

// ensembleFields is Ensemble without its methods: the codec writes each
// member with its kind and reads it back by its kind.
type ensembleFields Ensemble

// MarshalJSON encodes the members with their kinds.
func (e Ensemble) MarshalJSON() ([]byte, error) { return event.MarshalJSON(ensembleFields(e)) }

// UnmarshalJSON decodes members of registered kinds; a member that is not
// an Analyzer is an error.
func (e *Ensemble) UnmarshalJSON(data []byte) error {
	var w ensembleFields
	if err := event.UnmarshalJSON(data, &w); err != nil {
		return fmt.Errorf("security: ensemble: %w", err)
	}
	*e = Ensemble(w)
	return nil
}

func init() {
	event.RegisterKind[LLMAnalyzer]("LLMSecurityAnalyzer")
	event.RegisterKind[RuleAnalyzer]("PatternSecurityAnalyzer")
	event.RegisterKindAlias("RuleSecurityAnalyzer", "PatternSecurityAnalyzer")
	event.RegisterKind[Ensemble]("EnsembleSecurityAnalyzer")
}
