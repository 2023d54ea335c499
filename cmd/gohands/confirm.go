package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/gohands/gohands/cmd/gohands/internal/tui"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// confirmPolicy turns a --confirm value into the conversation's policy and
// analyzer (nil analyzer: keep the conversation's).
func confirmPolicy(mode, workDir string, secretNames []string) (security.ConfirmationPolicy, security.Analyzer, error) {
	switch mode {
	case "", "never":
		return security.NeverConfirm{}, nil, nil
	case "always":
		return security.AlwaysConfirm{}, nil, nil
	case "risky":
		// The model's own rating and the rules both count, the higher
		// wins: a model that calls rm -rf HIGH is asked about even when
		// no rule knows the command.
		return security.NewConfirmRisky(), &security.Ensemble{Analyzers: []security.Analyzer{
			security.LLMAnalyzer{},
			&security.RuleAnalyzer{WorkDir: workDir, SecretNames: secretNames},
		}}, nil
	}
	return nil, nil, usageErr("--confirm %q: want never, always or risky", mode)
}

// refuseHighPolicy is the policy of a run nobody watches (--confirm never
// without --allow-high-risk): actions rated HIGH by the model or the rules
// stop the run, which refuses them (see refuser); the others run unasked.
func refuseHighPolicy(workDir string, secretNames []string) (security.ConfirmationPolicy, security.Analyzer) {
	_, an, _ := confirmPolicy("risky", workDir, secretNames)
	return &security.ConfirmRisky{Threshold: event.RiskHigh}, an
}

// refusedAction is an action a run refused unasked because of its risk,
// as the --json result lists it.
type refusedAction struct {
	Tool   string `json:"tool"`
	Action string `json:"action"`
	Risk   string `json:"risk"`
}

// refusal rates the pending actions and returns those rated HIGH and the
// reason the model is given: every pending action is rejected, since they
// are approved or rejected together. None rated HIGH (a conversation
// resumed waiting from a run that asked): nil, to run them.
func refusal(ctx context.Context, an security.Analyzer, pending []*event.ActionEvent) ([]refusedAction, string) {
	risks := make([]event.SecurityRisk, len(pending))
	for i, a := range pending {
		risks[i] = a.SecurityRisk
	}
	if an != nil && len(pending) > 0 {
		risks = security.AnalyzeAll(ctx, an, pending)
	}
	var out []refusedAction
	for i, a := range pending {
		if risks[i] == event.RiskHigh {
			out = append(out, refusedAction{Tool: a.ToolName, Action: actionLine(a), Risk: string(risks[i])})
		}
	}
	if len(out) == 0 {
		return nil, ""
	}
	var sb strings.Builder
	sb.WriteString("Refused, not run: this run has nobody to approve actions, and it does not run HIGH risk actions unattended. Refused: ")
	for i, r := range out {
		if i > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%s `%s` (risk %s)", r.Tool, r.Action, r.Risk)
	}
	sb.WriteString(".")
	if len(out) < len(pending) {
		sb.WriteString(" The other actions of the same reply were not run either; call them again if they are still needed.")
	}
	sb.WriteString(" Do not try the refused action again in another form: do the task another, safer way, or finish and tell the user what they would have to run themselves.")
	return out, sb.String()
}

// errNoAnswer means standard input ended before an answer was given.
var errNoAnswer = errors.New("no answer on standard input")

// asker shows pending actions and reads y/n answers, one a line.
type asker struct {
	in    io.Reader
	once  sync.Once
	lines chan line
	done  chan struct{} // closed by close
	out   io.Writer
	// analyzer, if set, rates the actions shown: the agent loop decides
	// with it but does not record its rating on the action events.
	analyzer security.Analyzer
	// workDir is where relative paths of edits are, for their previews.
	workDir string
	// allow holds the "always" answers of the run.
	allow allowList
}

// answer is a reply to a confirmation question.
type answer int

const (
	answerNo answer = iota
	answerYes
	answerAlways // yes, and stop asking about the same tools and commands in this run
)

// rate rates actions with the asker's analyzer, or takes the model's
// ratings.
func (k *asker) rate(ctx context.Context, actions []*event.ActionEvent) []event.SecurityRisk {
	if k.analyzer != nil && len(actions) > 0 {
		return security.AnalyzeAll(ctx, k.analyzer, actions)
	}
	risks := make([]event.SecurityRisk, len(actions))
	for i, a := range actions {
		risks[i] = a.SecurityRisk
	}
	return risks
}

// allowed reports whether earlier "always" answers cover the actions.
func (k *asker) allowed(ctx context.Context, actions []*event.ActionEvent) bool {
	return k.allow.covers(actions, k.rate(ctx, actions))
}

// ask shows the actions, with what each will do, and reads the answer.
// "always" is remembered (see allowList).
func (k *asker) ask(ctx context.Context, actions []*event.ActionEvent) (answer, error) {
	if len(actions) == 0 {
		fmt.Fprintln(k.out, "Actions are waiting for confirmation.")
	}
	risks := k.rate(ctx, actions)
	pending := make([]tui.Pending, len(actions))
	for i, a := range actions {
		pending[i] = tui.Pending{Tool: a.ToolName, Risk: risk(risks[i]), Line: actionLine(a), Detail: actionPreview(a, k.workDir)}
	}
	hidden := printPending(k.out, pending, linePreview)
	always := "[a]lways in this run"
	if label := scopeLabel(actions); label != "" {
		always = "[a]lways for " + label + " in this run"
	}
	show := ""
	if hidden {
		show = " / [d] show all"
	}
	for {
		if err := ctx.Err(); err != nil {
			return answerNo, err
		}
		fmt.Fprintf(k.out, "Run? [y]es / [n]o / %s%s: ", always, show)
		var l line
		select {
		case l = <-k.readLines():
		case <-ctx.Done():
			fmt.Fprintln(k.out)
			return answerNo, ctx.Err()
		}
		switch strings.ToLower(strings.TrimSpace(l.text)) {
		case "y", "yes":
			return answerYes, nil
		case "n", "no":
			return answerNo, nil
		case "a", "always":
			k.allow.add(actions)
			return answerAlways, nil
		case "d":
			printPending(k.out, pending, -1)
			continue
		}
		if l.err != nil {
			fmt.Fprintln(k.out)
			return answerNo, errNoAnswer
		}
		fmt.Fprintln(k.out, "Please answer y, n or a.")
	}
}

// linePreview is how many lines of an action's preview a question in
// line mode shows before "d" shows all.
const linePreview = 20

// printPending shows waiting actions for a question in line mode: each
// one's line, then its preview up to limit lines (all if negative). It
// reports whether some lines were left out.
func printPending(w io.Writer, pending []tui.Pending, limit int) (hidden bool) {
	for _, p := range pending {
		fmt.Fprintf(w, "\nConfirm %s (risk %s): %s\n", p.Tool, p.Risk, p.Line)
		detail := p.Detail
		if limit >= 0 && len(detail) > limit {
			more := len(detail) - limit + 1
			detail = append(detail[:limit-1:limit-1], fmt.Sprintf("… %d more lines (answer d to see all)", more))
			hidden = true
		}
		for _, l := range detail {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	return hidden
}

// actionLine is one line saying what an action does: a terminal's
// command, a file edit's command and path, or the call's arguments.
func actionLine(a *event.ActionEvent) string {
	var args struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	if json.Unmarshal([]byte(a.ToolCall.Arguments), &args) == nil {
		switch {
		case args.Path != "":
			return termtext.Strip(oneLine(args.Command + " " + args.Path))
		case args.Command != "":
			return termtext.Strip(oneLine(args.Command))
		}
	}
	if a.Summary != "" {
		return termtext.Strip(oneLine(a.Summary))
	}
	return termtext.Strip(oneLine(a.ToolCall.Arguments))
}

// line is one line of input, or the error that ended it.
type line struct {
	text string
	err  error
}

// readLines reads the input in the background, so that an interrupt is
// not held up by a prompt. The reader lives until the input ends: a
// terminal cannot be read with a deadline.
//
// On a terminal, Ctrl-D is an end of input that does not last: it ends a
// partial line (sent as a line), or on an empty line it is sent as io.EOF
// and reading goes on, so the prompt after it still reads.
func (k *asker) readLines() <-chan line {
	k.once.Do(func() {
		k.lines = make(chan line)
		tty := isTerminal(k.in)
		go func() {
			r := bufio.NewReader(k.in)
			for {
				s, err := r.ReadString('\n')
				again := tty && errors.Is(err, io.EOF)
				if again && s != "" {
					err = nil
				}
				select {
				case k.lines <- line{s, err}:
				case <-k.done:
					return
				}
				if err != nil && !again {
					return
				}
			}
		}()
	})
	return k.lines
}

// close lets the reader end once its pending read returns.
func (k *asker) close() { close(k.done) }

func risk(r event.SecurityRisk) string {
	if r == "" {
		return "UNKNOWN"
	}
	return string(r)
}

// actionPreview returns what an action will do, whole, for the question
// before it runs: an edit's diff against the file as it is now
// (tool.ActionPreviewer), a long or multi-line command, or long
// arguments; nil when its one line says it all.
func actionPreview(a *event.ActionEvent, workDir string) []string {
	if p, ok := a.Action.(tool.ActionPreviewer); ok {
		e := p.PreviewAction(workDir)
		if e == nil {
			return nil
		}
		var out []string
		if e.Note != "" {
			out = append(out, "("+termtext.Strip(e.Note)+")")
		}
		if e.Created {
			out = append(out, "new file "+termtext.Strip(e.Path))
		}
		return append(out, tui.Diff(e.Old, e.New)...)
	}
	if v := tool.PresentAction(a); v.Command != nil {
		cmd := termtext.Strip(strings.TrimSpace(*v.Command))
		if strings.Contains(cmd, "\n") || len(cmd) > 100 {
			return strings.Split(cmd, "\n")
		}
		return nil
	}
	if len(a.ToolCall.Arguments) <= 100 {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(a.ToolCall.Arguments), &v) != nil {
		return nil
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return strings.Split(termtext.Strip(string(b)), "\n")
}

// subcommandTools are programs whose first operand is a subcommand: an
// "always" answer about `go test` does not cover `go run`.
var subcommandTools = map[string]bool{
	"git": true, "go": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true, "deno": true,
	"cargo": true, "rustup": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "pipenv": true,
	"docker": true, "podman": true, "kubectl": true, "helm": true, "gh": true, "dotnet": true, "mvn": true,
	"gradle": true, "make": true, "bundle": true, "rails": true, "rake": true, "composer": true, "mix": true,
	"terraform": true, "tofu": true, "aws": true, "gcloud": true, "az": true, "systemctl": true, "apt": true,
	"apt-get": true, "brew": true, "conda": true,
}

// shellKeywords start or end a compound command.
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "while": true, "until": true,
	"do": true, "done": true, "esac": true, "!": true, "{": true, "}": true, "time": true,
}

// actionScopes are what an "always" answer about a covers: for a terminal
// command, each program it runs with its subcommand ("go test", "ls"),
// nested ones included; for another tool, the tool. ok is false when the
// command cannot be read: such an action is always asked about.
func actionScopes(a *event.ActionEvent) (scopes []string, ok bool) {
	if a.ToolName != terminal.Name {
		return []string{a.ToolName}, true
	}
	in, err := (&security.RuleAnalyzer{}).Input(a)
	if err != nil || len(in.Commands) == 0 {
		return nil, false
	}
	for _, c := range in.Commands {
		verb, args := c.Verb, c.Args
		// The parser reads a shell keyword as a program: the program is
		// the word after it (do sleep 1, then make, ! grep).
		for shellKeywords[verb] && len(args) > 0 {
			verb, args = path.Base(args[0]), args[1:]
		}
		switch {
		case verb == "":
			return nil, false
		case shellKeywords[verb] || verb == "for" || verb == "case" || verb == "select":
			continue // done, fi, esac; a loop's header runs nothing
		}
		s := verb
		if subcommandTools[verb] {
			for _, arg := range args {
				if !strings.HasPrefix(arg, "-") {
					s += " " + arg
					break
				}
			}
		}
		if c.Sudo {
			s = "sudo " + s
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return scopes, true
}

// scopeLabel says what an "always" answer about actions will cover.
func scopeLabel(actions []*event.ActionEvent) string {
	var tools, cmds []string
	for _, a := range actions {
		sc, ok := actionScopes(a)
		if !ok {
			continue
		}
		for _, s := range sc {
			if a.ToolName == terminal.Name {
				if !slices.Contains(cmds, "`"+s+"`") {
					cmds = append(cmds, "`"+s+"`")
				}
			} else if !slices.Contains(tools, s) {
				tools = append(tools, s)
			}
		}
	}
	var parts []string
	if len(cmds) > 0 {
		parts = append(parts, strings.Join(cmds, ", ")+" commands")
	}
	if len(tools) > 0 {
		parts = append(parts, strings.Join(tools, ", ")+" actions")
	}
	return strings.Join(parts, " and ")
}

// allowList holds the "always" answers of a session: the scopes of
// actions that run without a question from then on, unless rated HIGH.
type allowList struct {
	mu     sync.Mutex
	scopes map[string]bool
}

// add allows the scopes of actions.
func (l *allowList) add(actions []*event.ActionEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.scopes == nil {
		l.scopes = map[string]bool{}
	}
	for _, a := range actions {
		sc, _ := actionScopes(a)
		for _, s := range sc {
			l.scopes[a.ToolName+"\x00"+s] = true
		}
	}
}

// covers reports whether every action is allowed already and none is
// rated HIGH: HIGH risk is asked about whatever was answered before.
func (l *allowList) covers(actions []*event.ActionEvent, risks []event.SecurityRisk) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.scopes) == 0 || len(actions) == 0 {
		return false
	}
	for i, a := range actions {
		if risks[i] == event.RiskHigh {
			return false
		}
		sc, ok := actionScopes(a)
		if !ok {
			return false
		}
		for _, s := range sc {
			if !l.scopes[a.ToolName+"\x00"+s] {
				return false
			}
		}
	}
	return true
}
