package eval

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Outcome is how a task run ended.
type Outcome string

// Outcomes. Only OutcomeSuccess counts as solved; the others say why not.
const (
	OutcomeSuccess Outcome = "success"
	// OutcomeFailure: the agent finished and the verifier said no.
	OutcomeFailure Outcome = "failure"
	// OutcomeTimeout: the agent did not finish within the time limit.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeMaxSteps: the agent did not finish within the step limit.
	OutcomeMaxSteps Outcome = "max_steps"
	// OutcomeAgentError: the agent's run failed (the model's errors, a
	// run that ended in error or stuck).
	OutcomeAgentError Outcome = "agent_error"
	// OutcomeSetupError: the workspace could not be prepared.
	OutcomeSetupError Outcome = "setup_error"
	// OutcomeVerifyError: the verifier could not give a verdict (not
	// found, crashed, timed out).
	OutcomeVerifyError Outcome = "verify_error"
)

// Result is the outcome of one task with one configuration, as written in
// its result.json.
type Result struct {
	Task    string  `json:"task"`
	Config  string  `json:"config"`
	Model   string  `json:"model,omitempty"`
	Success bool    `json:"success"`
	Outcome Outcome `json:"outcome"`
	// Reason says why a task did not succeed.
	Reason         string `json:"reason,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	// Status is the conversation's final execution status.
	Status           string  `json:"status,omitempty"`
	FinalMessage     string  `json:"final_message,omitempty"`
	Steps            int     `json:"steps"`
	Cost             float64 `json:"cost"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	DurationMS       int64   `json:"duration_ms"`
	// VerifyExit is the verifier's exit status, when it ran.
	VerifyExit *int `json:"verify_exit,omitempty"`
	PatchBytes int  `json:"patch_bytes"`
	// Resumed is set on a result read back from an earlier run (not
	// written).
	Resumed bool `json:"-"`
}

func readResult(dir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", filepath.Join(dir, ResultFile), err)
	}
	return &r, nil
}

// Summary is the summary of a results directory, as written in its
// summary.json.
type Summary struct {
	Configs []ConfigSummary `json:"configs"`
	Results []*Result       `json:"results"`
	// Interrupted marks the summary of a run stopped before every task
	// had a result: it holds the tasks done so far, and running the suite
	// again runs the rest.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ConfigSummary totals one configuration's results.
type ConfigSummary struct {
	Config           string          `json:"config"`
	Model            string          `json:"model,omitempty"`
	Tasks            int             `json:"tasks"`
	Solved           int             `json:"solved"`
	SuccessRate      float64         `json:"success_rate"`
	Outcomes         map[Outcome]int `json:"outcomes"`
	Cost             float64         `json:"cost"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	Steps            int             `json:"steps"`
	DurationMS       int64           `json:"duration_ms"`
}

// Summarize reads every result under the results directory out.
func Summarize(out string) (*Summary, error) {
	s := &Summary{Results: []*Result{}, Configs: []ConfigSummary{}}
	cfgs, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	for _, c := range cfgs {
		if !c.IsDir() {
			continue
		}
		tasks, err := os.ReadDir(filepath.Join(out, c.Name()))
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		for _, t := range tasks {
			r, err := readResult(filepath.Join(out, c.Name(), t.Name()))
			if errors.Is(err, fs.ErrNotExist) {
				continue // not run yet, or interrupted
			}
			if err != nil {
				return nil, err
			}
			s.Results = append(s.Results, r)
		}
	}
	slices.SortFunc(s.Results, func(a, b *Result) int {
		return cmp.Or(strings.Compare(a.Config, b.Config), strings.Compare(a.Task, b.Task))
	})
	for _, r := range s.Results {
		if n := len(s.Configs); n == 0 || s.Configs[n-1].Config != r.Config {
			s.Configs = append(s.Configs, ConfigSummary{Config: r.Config, Model: r.Model, Outcomes: map[Outcome]int{}})
		}
		c := &s.Configs[len(s.Configs)-1]
		c.Tasks++
		if r.Success {
			c.Solved++
		}
		c.Outcomes[r.Outcome]++
		c.Cost += r.Cost
		c.PromptTokens += r.PromptTokens
		c.CompletionTokens += r.CompletionTokens
		c.Steps += r.Steps
		c.DurationMS += r.DurationMS
	}
	for i := range s.Configs {
		c := &s.Configs[i]
		c.SuccessRate = float64(c.Solved) / float64(c.Tasks)
	}
	return s, nil
}

// Summary file names in a results directory.
const (
	SummaryJSON     = "summary.json"
	SummaryMarkdown = "summary.md"
)

// WriteSummary writes s as summary.json and summary.md into out.
func WriteSummary(out string, s *Summary) error {
	if err := writeJSON(filepath.Join(out, SummaryJSON), s); err != nil {
		return err
	}
	var b strings.Builder
	s.WriteMarkdown(&b)
	if err := os.WriteFile(filepath.Join(out, SummaryMarkdown), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// WriteMarkdown writes s as markdown tables: one line per configuration,
// then one per task.
func (s *Summary) WriteMarkdown(w io.Writer) {
	if s.Interrupted {
		fmt.Fprintf(w, "Interrupted: %d task results so far; run the suite again to run the rest.\n\n", len(s.Results))
	}
	fmt.Fprintln(w, "| config | model | solved | rate | cost | tokens | steps | time | time/task |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, c := range s.Configs {
		fmt.Fprintf(w, "| %s | %s | %d/%d | %.0f%% | $%.4f | %d | %d | %s | %s |\n",
			c.Config, c.Model, c.Solved, c.Tasks, 100*c.SuccessRate, c.Cost,
			c.PromptTokens+c.CompletionTokens, c.Steps, ms(c.DurationMS), ms(c.DurationMS/int64(max(c.Tasks, 1))))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| config | task | outcome | steps | cost | tokens | time | reason |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range s.Results {
		fmt.Fprintf(w, "| %s | %s | %s | %d | $%.4f | %d | %s | %s |\n",
			r.Config, r.Task, r.Outcome, r.Steps, r.Cost, r.PromptTokens+r.CompletionTokens,
			ms(r.DurationMS), cell(r.Reason))
	}
}

// Compare writes two summaries side by side: for each task present in
// either, its outcome in a and in b, then the totals, a's configurations
// against b's.
func Compare(w io.Writer, a, b *Summary) {
	type key struct{ config, task string }
	ra, rb := map[key]*Result{}, map[key]*Result{}
	var keys []key
	for _, r := range a.Results {
		k := key{r.Config, r.Task}
		ra[k] = r
		keys = append(keys, k)
	}
	for _, r := range b.Results {
		k := key{r.Config, r.Task}
		if _, ok := ra[k]; !ok {
			keys = append(keys, k)
		}
		rb[k] = r
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(strings.Compare(x.config, y.config), strings.Compare(x.task, y.task))
	})
	outcome := func(r *Result) string {
		if r == nil {
			return "—"
		}
		return fmt.Sprintf("%s (%d steps, %s)", r.Outcome, r.Steps, ms(r.DurationMS))
	}
	fmt.Fprintln(w, "| config | task | A | B | change |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range keys {
		x, y := ra[k], rb[k]
		change := ""
		switch {
		case x != nil && y != nil && !x.Success && y.Success:
			change = "fixed"
		case x != nil && y != nil && x.Success && !y.Success:
			change = "broken"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", k.config, k.task, outcome(x), outcome(y), change)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | config | solved | rate | cost | tokens | steps | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, side := range []struct {
		name string
		s    *Summary
	}{{"A", a}, {"B", b}} {
		for _, c := range side.s.Configs {
			fmt.Fprintf(w, "| %s | %s | %d/%d | %.0f%% | $%.4f | %d | %d | %s |\n", side.name, c.Config,
				c.Solved, c.Tasks, 100*c.SuccessRate, c.Cost, c.PromptTokens+c.CompletionTokens, c.Steps, ms(c.DurationMS))
		}
	}
}

func ms(v int64) string {
	return (time.Duration(v) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// cell makes s safe in a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
