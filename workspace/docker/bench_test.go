package docker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/workspace/docker"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// BenchmarkColdStart: from Start (container creation) to a 200 /health,
// then the image's size and the idle container's memory.
func BenchmarkColdStart(b *testing.B) {
	o := dockertest.Options(b)
	ctx := context.Background()
	var mem uint64
	for range b.N {
		c, err := docker.Start(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		time.Sleep(time.Second) // settle
		if m, err := c.Memory(ctx); err == nil {
			mem = m
		}
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms-to-health")
	b.ReportMetric(float64(mem)/(1<<20), "idle-MB")
	if im, err := dockertest.Engine(b).ImageInspect(ctx, o.Image); err == nil {
		b.ReportMetric(float64(im.Size)/1e6, "image-MB")
	}
}

// BenchmarkStep: the time per agent step (a scripted model asking for a
// shell command) of a conversation on gohands serve in this process
// (local) and in a container.
func BenchmarkStep(b *testing.B) {
	const steps = 20
	// Each conversation: steps terminal calls, then finish.
	model := llmtest.NewResponder(b, func(r llmtest.Request) (llmtest.Reply, error) {
		n := 0
		msgs, _ := r.Body["messages"].([]any)
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "assistant" {
				n++
			}
		}
		if n >= steps {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: fmt.Sprintf(`{"command":"echo step %d"}`, n)}}}, nil
	}, &llmtest.ResponderOptions{NoRecord: true})
	agent := benchAgent(b, model.URL+"/v1")

	b.Run("local", func(b *testing.B) {
		dir := b.TempDir()
		srv, err := server.New(&server.Options{ConversationsPath: dir + "/c", WorkspacePath: dir + "/w", BashEventsDir: dir + "/b"})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		defer srv.Close(context.Background())
		runSteps(b, hs.URL, "", agent, dir, steps)
	})
	b.Run("docker", func(b *testing.B) {
		o := dockertest.Options(b)
		o.Network = "host" // the scripted model is on this machine's loopback
		c, err := docker.Start(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		runSteps(b, c.URL(), c.SessionKey(), agent, "/workspace", steps)
	})
}

func runSteps(b *testing.B, base, key string, agent map[string]any, dir string, steps int) {
	b.Helper()
	do := func(method, path string, body any, out any) {
		var r io.Reader
		if body != nil {
			d, _ := json.Marshal(body)
			r = bytes.NewReader(d)
		}
		req, _ := http.NewRequest(method, base+path, r)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("X-Session-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			d, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, d)
		}
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
	}
	b.ResetTimer()
	for range b.N {
		var info map[string]any
		do("POST", "/api/conversations", map[string]any{
			"agent":           agent,
			"workspace":       map[string]any{"working_dir": dir, "kind": "LocalWorkspace"},
			"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
		}, &info)
		id := info["id"].(string)
		for info["execution_status"] != "finished" {
			if s := info["execution_status"]; s == "error" || s == "stuck" {
				b.Fatalf("conversation ended %v", s)
			}
			time.Sleep(2 * time.Millisecond)
			do("GET", "/api/conversations/"+id, nil, &info)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*steps), "ms/step")
}

func benchAgent(b *testing.B, baseURL string) map[string]any {
	data, err := os.ReadFile("../../server/testdata/python_agent.json")
	if err != nil {
		b.Fatal(err)
	}
	var a map[string]any
	json.Unmarshal(data, &a)
	a["llm"].(map[string]any)["base_url"] = baseURL
	a["llm"].(map[string]any)["num_retries"] = 0
	return a
}
