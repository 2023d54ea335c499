package openai_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// prismBin is Stoplight Prism as scripts/deps.d/40-npm.sh installs it.
const prismBin = "testdata/prism/node_modules/.bin/prism"

// patchNullable rewrites every schema of doc that has "nullable" but no
// "type" as {"anyOf": [the schema without nullable, {"type": "null"}]}: Ajv,
// which Prism compiles schemas with, refuses such a schema, and Prism then
// skips validating the bodies that reach it (testdata/openapi/SOURCE.md).
// It returns how many it rewrote.
func patchNullable(doc any) int {
	n := 0
	switch v := doc.(type) {
	case map[string]any:
		for _, sub := range v {
			n += patchNullable(sub)
		}
		nullable, ok := v["nullable"]
		if _, typed := v["type"]; !ok || typed {
			break
		}
		delete(v, "nullable")
		rest := make(map[string]any, len(v))
		for k, x := range v {
			rest[k] = x
			delete(v, k)
		}
		v["anyOf"] = []any{rest}
		if nullable == true {
			v["anyOf"] = []any{rest, map[string]any{"type": "null"}}
		}
		n++
	case []any:
		for _, sub := range v {
			n += patchNullable(sub)
		}
	}
	return n
}

// patchInputItem makes the InputItem of a Responses input an anyOf of its
// kinds rather than a oneOf. A message with a list of content parts is
// both an EasyInputMessage and an Item's InputMessage, so under oneOf no
// such message is valid (a user's text and image, say; the official SDK's
// EasyInputMessageParam takes one); the schema's discriminator, type, does
// not tell the two apart either (both are "message").
func patchInputItem(doc any) error {
	schemas, _ := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	item, ok := schemas["InputItem"].(map[string]any)
	if !ok || item["oneOf"] == nil {
		return errors.New("the document has no InputItem oneOf to patch")
	}
	item["anyOf"] = item["oneOf"]
	delete(item, "oneOf")
	return nil
}

// startPrism runs Prism in mock mode with --errors on OpenAI's document,
// patched, and returns its base URL.
func startPrism(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(prismBin); err != nil {
		testenv.Missing(t, "Prism (run scripts/deps.sh): %v", err)
	}
	testenv.Program(t, "node")
	f, err := os.Open("testdata/openapi/openapi.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if n := patchNullable(doc); n != 24 {
		t.Fatalf("patched %d schemas with nullable and no type, want the 24 of this document", n)
	}
	if err := patchInputItem(doc); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "openapi.json")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, b, 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prismBin, "mock", "--errors", "-h", "127.0.0.1", "-p", fmt.Sprint(port), spec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = &lockedWriter{mu: &mu, w: &log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		once := false
		for sc.Scan() {
			mu.Lock()
			log.Write(sc.Bytes())
			log.WriteByte('\n')
			mu.Unlock()
			if !once && strings.Contains(sc.Text(), "Prism is listening") {
				once = true
				close(ready)
			}
		}
		if !once {
			close(ready)
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Minute): // a hang guard: it reads a 3 MB document (over 5 minutes at load 40)
		t.Fatal("Prism did not start in 10 minutes")
	}
	if cmd.ProcessState != nil || ctx.Err() != nil {
		t.Fatalf("Prism exited:\n%s", log.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prismVerdict records Prism's answers to one LLM's requests.
type prismVerdict struct {
	mu       sync.Mutex
	statuses []int
	refusals []string // the validation details of 422 answers
	// badExample is set when Prism found its own reply, the document's
	// example, invalid against the document (a 500 under --errors).
	badExample bool
}

func (v *prismVerdict) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.statuses = append(v.statuses, resp.StatusCode)
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnprocessableEntity {
			v.refusals = append(v.refusals, string(b))
		}
		if resp.StatusCode == http.StatusInternalServerError && bytes.Contains(b, []byte("request/response is not valid")) {
			v.badExample = true
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, nil
}

// TestOpenAPIConformance sends every message shape the agent produces,
// streamed and not, through the Chat Completions and Responses clients to
// Prism validating against OpenAI's official OpenAPI document: any request
// it refuses fails. Unstreamed, the client must also read Prism's reply,
// the document's example. (Prism cannot write an event stream: a valid
// streamed request gets its 500 "cannot serialise", an invalid one 422.)
func TestOpenAPIConformance(t *testing.T) {
	base := startPrism(t)

	t.Run("refuses known-bad requests", func(t *testing.T) {
		bad := map[string]string{
			// An output message without id and status: no input shape.
			"responses": `{"model":"gpt-5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}]}`,
			// An image in a tool message: text only there.
			"chat/completions": `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"image_url","image_url":{"url":"` + llmtest.TinyPNG + `"}}]}]}`,
		}
		for path, body := range bad {
			req, _ := http.NewRequest(http.MethodPost, base+"/"+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-test")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("%s: a known-bad request got %s, want 422 (is validation on?)", path, resp.Status)
			}
		}
	})

	apis := []struct {
		name, model string
		edit        func(*llm.Config)
	}{
		{"chat", "openai/gpt-4o", nil},
		{"chat reasoning", "openai/gpt-5-mini", func(c *llm.Config) { c.APIMode = "chat" }},
		{"responses", "openai/gpt-5-mini", nil},
	}
	for _, api := range apis {
		for _, shape := range llmtest.Shapes() {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/stream=%v", api.name, shape.Name, stream)
				t.Run(name, func(t *testing.T) {
					verdict := &prismVerdict{}
					cfg := llm.DefaultConfig(api.model)
					cfg.APIKey = secret.New("sk-test")
					cfg.BaseURL = base
					cfg.NumRetries = 0
					// A hang guard only: Prism's first answer to a
					// streamed Responses request took 52 s at load 15
					// and over 60 s at load 25.
					cfg.Timeout = 600
					if api.edit != nil {
						api.edit(&cfg)
					}
					l, err := llm.New(cfg, &llm.Options{HTTPClient: &http.Client{Transport: verdict}, Logger: quiet})
					if err != nil {
						t.Fatal(err)
					}
					var opts *llm.CallOptions
					if stream {
						opts = &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
					}
					_, err = l.Completion(context.Background(), shape.Messages, tools, opts)
					verdict.mu.Lock()
					defer verdict.mu.Unlock()
					for _, r := range verdict.refusals {
						t.Errorf("Prism refused the request:\n%s", r)
					}
					switch {
					case len(verdict.statuses) != 1:
						t.Errorf("%d requests, want 1", len(verdict.statuses))
					case !stream && verdict.badExample:
						// The Responses example is not valid against
						// the document's own Response schema; the
						// request was.
						t.Logf("request valid; Prism's example reply is not: %v", err)
					case !stream && err != nil && len(verdict.refusals) == 0:
						t.Errorf("reading the document's example reply: %v", err)
					case stream && verdict.statuses[0] != http.StatusInternalServerError:
						t.Errorf("streamed: Prism answered %d, want its 500 for a valid streamed request", verdict.statuses[0])
					}
				})
			}
		}
	}
}
