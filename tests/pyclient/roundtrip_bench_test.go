package pyclient_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/workspace"
)

// BenchmarkRoundTrip is the latency of one scripted step (a message, a
// run, the model's text reply, finished) through a conversation in the
// client's process and through a remote conversation on an agent server
// over loopback: BenchmarkRoundTrip/CLIENT/WHERE, CLIENT gohands (package
// conversation and conversation/remote) or reference (the Python SDK's
// Conversation, testdata/roundtrip.py), WHERE local, gohands-server or
// reference-server. The server is a process of its own, as users run it.
// Each sizes its own work (meant for -benchtime 1x) and reports ms/step
// (mean) and p50-ms; a step through the reference's client is timed by
// the Python program itself, so its start-up is not counted.
func BenchmarkRoundTrip(b *testing.B) {
	const goSteps, pySteps = 200, 50
	reply := func(llmtest.Request) (llmtest.Reply, error) { return llmtest.Reply{Text: "ok"}, nil }
	newModel := func(b *testing.B) *llmtest.Server {
		return llmtest.NewResponder(b, reply, &llmtest.ResponderOptions{NoRecord: true})
	}
	goAgent := func(modelURL string) *agent.Agent {
		cfg := llm.DefaultConfig("openai/gpt-4o")
		cfg.BaseURL, cfg.APIKey, cfg.UsageID, cfg.NumRetries = modelURL+"/v1", secret.New("scripted"), "agent", 0
		return agent.New(cfg, []tool.Spec{{Name: "terminal"}}, nil)
	}
	timeSteps := func(b *testing.B, c conversation.Conversation, n int) {
		ctx := b.Context()
		lat := make([]time.Duration, 0, n)
		for i := range n + 1 { // the first warms up
			start := time.Now()
			if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
				b.Fatal(err)
			}
			if err := c.Run(ctx); err != nil {
				b.Fatal(err)
			}
			if i > 0 {
				lat = append(lat, time.Since(start))
			}
		}
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		slices.Sort(lat)
		report(b, float64(sum.Microseconds())/1e3/float64(len(lat)), float64(lat[len(lat)/2].Microseconds())/1e3)
	}
	goRemote := func(b *testing.B, url string, n int) {
		model := newModel(b)
		c, err := remote.New(b.Context(), goAgent(model.URL), &workspace.Remote{Host: url, APIKey: apiKey, WorkingDir: b.TempDir()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		timeSteps(b, c, n)
	}
	pyRun := func(b *testing.B, py string, args ...string) {
		model := newModel(b)
		ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join("testdata", "roundtrip.py"),
			"--model", model.URL, "--workdir", b.TempDir(), "--steps", strconv.Itoa(pySteps)}, args...)...)
		cmd.Env = referenceEnv(b)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("roundtrip.py: %v\n%s", err, tail([]byte(stderr.String()), 4000))
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var res struct {
			MsPerStep float64 `json:"ms_per_step"`
			P50Ms     float64 `json:"p50_ms"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			b.Fatalf("roundtrip.py printed %q: %v", out, err)
		}
		report(b, res.MsPerStep, res.P50Ms)
	}

	b.Run("gohands/local", func(b *testing.B) {
		model := newModel(b)
		c, err := conversation.New(b.Context(), goAgent(model.URL), b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		timeSteps(b, c, goSteps)
	})
	b.Run("gohands/gohands-server", func(b *testing.B) { goRemote(b, startGohandsServer(b).URL, goSteps) })
	b.Run("gohands/reference-server", func(b *testing.B) {
		// As many steps as the reference's client makes there: the
		// reference's server slows down as a conversation grows.
		goRemote(b, startReferenceServer(b, testenv.ReferencePython(b)).URL, pySteps)
	})
	b.Run("reference/local", func(b *testing.B) { pyRun(b, testenv.ReferencePython(b)) })
	b.Run("reference/reference-server", func(b *testing.B) {
		py := testenv.ReferencePython(b)
		pyRun(b, py, "--server", startReferenceServer(b, py).URL, "--api-key", apiKey)
	})
}

// report sets a round-trip benchmark's figures, in milliseconds.
func report(b *testing.B, mean, p50 float64) {
	b.ReportMetric(mean, "ms/step")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(0, "ns/op")
}
