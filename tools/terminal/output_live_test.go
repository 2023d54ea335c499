//go:build linux

package terminal

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/tool"
)

// Under tool.WithOutput the command's output is passed on while it runs:
// the first line arrives before the command ends, and everything it
// printed arrives in order, without the end marker.
func TestLiveOutput(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	var mu sync.Mutex
	var got strings.Builder
	first := make(chan time.Time, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx = tool.WithOutput(ctx, func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got.WriteString(s)
		if strings.Contains(got.String(), "one") {
			select {
			case first <- time.Now():
			default:
			}
		}
	})
	o, err := term.Run(ctx, &Action{Command: "echo one; sleep 1; echo two"})
	if err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	select {
	case at := <-first:
		// The command sleeps a second between its lines.
		if ended.Sub(at) < 500*time.Millisecond {
			t.Errorf("the first line arrived %s before the end, want about 1s", ended.Sub(at))
		}
	default:
		t.Fatal("the first line never arrived")
	}
	mu.Lock()
	s := got.String()
	mu.Unlock()
	if !strings.Contains(s, "one") || !strings.Contains(s, "two") || strings.Index(s, "one") > strings.Index(s, "two") {
		t.Errorf("live output %q, want one then two", s)
	}
	if strings.Contains(s, "\x1b_gh") {
		t.Errorf("live output carries the end marker: %q", s)
	}
	if !strings.Contains(o.Text(), "two") {
		t.Errorf("observation %q", o.Text())
	}
}
