package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/security"
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
}

// answer is a reply to a confirmation question.
type answer int

const (
	answerNo answer = iota
	answerYes
	answerAlways // yes, and stop asking in this run
)

// ask shows the actions, one line each, and reads the answer.
func (k *asker) ask(ctx context.Context, actions []*event.ActionEvent) (answer, error) {
	if len(actions) == 0 {
		fmt.Fprintln(k.out, "Actions are waiting for confirmation.")
	}
	for _, a := range actions {
		r := a.SecurityRisk
		if k.analyzer != nil {
			r = security.AnalyzeAll(ctx, k.analyzer, []*event.ActionEvent{a})[0]
		}
		fmt.Fprintf(k.out, "\nConfirm %s (risk %s): %s\n", a.ToolName, risk(r), actionLine(a))
	}
	for {
		if err := ctx.Err(); err != nil {
			return answerNo, err
		}
		fmt.Fprint(k.out, "Run? [y]es / [n]o / [a]lways in this run: ")
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
			return answerAlways, nil
		}
		if l.err != nil {
			fmt.Fprintln(k.out)
			return answerNo, errNoAnswer
		}
		fmt.Fprintln(k.out, "Please answer y, n or a.")
	}
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
func (k *asker) readLines() <-chan line {
	k.once.Do(func() {
		k.lines = make(chan line)
		go func() {
			r := bufio.NewReader(k.in)
			for {
				s, err := r.ReadString('\n')
				select {
				case k.lines <- line{s, err}:
				case <-k.done:
					return
				}
				if err != nil {
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
