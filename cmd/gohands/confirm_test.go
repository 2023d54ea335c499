package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/security"
)

func testAction(cmd string) *event.ActionEvent {
	return &event.ActionEvent{
		ToolName: "terminal", ToolCallID: "c1", SecurityRisk: event.RiskUnknown,
		ToolCall: event.ToolCall{ID: "c1", Name: "terminal", Arguments: `{"command": "` + cmd + `"}`},
	}
}

func TestAskAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want answer
		err  error
	}{
		{"y\n", answerYes, nil},
		{"YES\n", answerYes, nil},
		{"n\n", answerNo, nil},
		{"a\n", answerAlways, nil},
		{"always\n", answerAlways, nil},
		{"maybe\n\nno\n", answerNo, nil},
		{"y", answerYes, nil}, // no final newline
		{"", answerNo, errNoAnswer},
		{"maybe\n", answerNo, errNoAnswer},
	} {
		var out strings.Builder
		k := &asker{in: strings.NewReader(tc.in), out: &out, done: make(chan struct{})}
		got, err := k.ask(context.Background(), []*event.ActionEvent{testAction("ls")})
		k.close()
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("answer %q: got %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
		}
		if !strings.Contains(out.String(), "Confirm terminal (risk UNKNOWN): ls\n") {
			t.Errorf("answer %q: the prompt lacks the command:\n%s", tc.in, out.String())
		}
		if strings.HasPrefix(tc.in, "maybe") && !strings.Contains(out.String(), "Please answer y, n or a.") {
			t.Errorf("answer %q: no hint after a bad answer:\n%s", tc.in, out.String())
		}
	}
}

// The prompt shows the analyzer's rating, which the action events lack.
func TestAskShowsAnalyzerRisk(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	k := &asker{in: strings.NewReader("n\n"), out: &out, done: make(chan struct{}), analyzer: &security.RuleAnalyzer{}}
	defer k.close()
	if _, err := k.ask(context.Background(), []*event.ActionEvent{testAction("rm -rf /")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(risk HIGH)") {
		t.Errorf("prompt:\n%s", out.String())
	}
}

// An interrupt ends the question even though the input stays silent.
func TestAskInterrupted(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	defer w.Close()
	k := &asker{in: r, out: io.Discard, done: make(chan struct{})}
	defer k.close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := k.ask(ctx, []*event.ActionEvent{testAction("ls")}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
