package bedrock_test

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/awsauth"
	"github.com/gohands/gohands/llm/internal/eventstream"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

//go:embed testdata/botocore_check.py
var botocoreCheck []byte

// botocore runs testdata/botocore_check.py in the reference venv (which
// holds botocore, the AWS SDK for Python) on inputs and returns its
// answers in order.
func botocore(t *testing.T, inputs []map[string]any) []map[string]any {
	t.Helper()
	py := testenv.Reference158Python(t)
	script := filepath.Join(t.TempDir(), "botocore_check.py")
	if err := os.WriteFile(script, botocoreCheck, 0o600); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, i := range inputs {
		b, _ := json.Marshal(i)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(py, script)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("botocore_check.py: %v\n%s", err, stderr.Bytes())
	}
	var res []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("botocore_check.py output %q: %v", sc.Bytes(), err)
		}
		res = append(res, m)
	}
	if len(res) != len(inputs) {
		t.Fatalf("botocore_check.py answered %d of %d\n%s", len(res), len(inputs), stderr.Bytes())
	}
	t.Logf("checked with botocore %v", res[0]["botocore"])
	return res
}

// signCheck is the input asking botocore to sign what req carried.
func signCheck(base string, req llmtest.Request, token string) map[string]any {
	u := base + req.EscapedPath
	if len(req.Query) > 0 {
		u += "?" + req.Query.Encode()
	}
	return map[string]any{
		"kind": "sign", "method": req.Method, "url": u, "content_type": req.Header.Get("Content-Type"),
		"body_b64": base64.StdEncoding.EncodeToString(req.RawBody), "amz_date": req.Header.Get("X-Amz-Date"),
		"access": testKeyID, "secret": testSecret, "token": token, "region": "us-east-1", "service": "bedrock",
	}
}

// TestSignatureMatchesBotocore: every request as the scripted server
// received it (plain and streamed, with and without a session token, a
// model id with ":" and an ARN with "/") carries the Authorization
// botocore's SigV4 signer computes for the same request at the same
// time; so do requests with a query and odd characters in the path.
func TestSignatureMatchesBotocore(t *testing.T) {
	isolate(t)
	var inputs []map[string]any
	var got []string
	for _, tc := range []struct {
		model  string
		token  string
		stream bool
	}{
		{claude, "", false},
		{claude, testToken, true},
		{"bedrock/arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", testToken, false},
		{"bedrock/amazon.nova-lite-v1:0", "", true},
	} {
		srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
		l := newLLM(t, srv, tc.model, func(c *llm.Config) { c.AWSSessionToken = secret.New(tc.token) })
		var opts *llm.CallOptions
		if tc.stream {
			opts = &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
		}
		if _, err := l.Completion(context.Background(), conversation(), tools, opts); err != nil {
			t.Fatal(err)
		}
		req := srv.LastRequest()
		if req.Header.Get("X-Amz-Security-Token") != tc.token {
			t.Errorf("%s: session token header %q", tc.model, req.Header.Get("X-Amz-Security-Token"))
		}
		inputs = append(inputs, signCheck(srv.URL, req, tc.token))
		got = append(got, req.Header.Get("Authorization"))
	}
	// Paths and queries the model calls do not exercise.
	for _, target := range []string{"https://bedrock-runtime.us-east-1.amazonaws.com/model/a%20b~c/x?b=2&a=1&a=0&c=x%20y", "http://127.0.0.1:8080/"} {
		r, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/json")
		awsauth.Sign(r, []byte(`{}`), awsauth.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, "us-east-1", "bedrock", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		inputs = append(inputs, map[string]any{
			"kind": "sign", "method": "POST", "url": target, "content_type": "application/json",
			"body_b64": base64.StdEncoding.EncodeToString([]byte(`{}`)), "amz_date": r.Header.Get("X-Amz-Date"),
			"access": testKeyID, "secret": testSecret, "token": "", "region": "us-east-1", "service": "bedrock",
		})
		got = append(got, r.Header.Get("Authorization"))
	}
	for i, res := range botocore(t, inputs) {
		if res["authorization"] != got[i] {
			t.Errorf("request %d (%s):\n got %s\nwant %s (botocore)", i, inputs[i]["url"], got[i], res["authorization"])
		}
	}
}

// TestBodiesMatchBotocoreModel: the request bodies of every message shape
// the agent produces (tool calls and results, images in user and tool
// messages, signed and redacted thinking, cache points, sampling and stop
// settings, a history with tool calls but no tools, a switch from another
// provider mid-conversation), streamed or not, are valid inputs of
// Converse and ConverseStream in AWS's published service model (botocore's
// bedrock-runtime service-2.json): no unknown key, every required member,
// one member per union, enums, types and base64 blobs checked.
func TestBodiesMatchBotocoreModel(t *testing.T) {
	isolate(t)
	sig := "c2ln"
	switched := []event.Message{
		event.UserMessage("Start."),
		{Role: event.RoleAssistant, ReasoningContent: "from gemini", ThinkingBlocks: []event.ThinkingBlock{{Thinking: "unsigned"}},
			ToolCalls: []event.ToolCall{{ID: "call_1__thought__c2lnbmF0dXJl", Name: "terminal", Arguments: `not json`}}},
		{Role: event.RoleTool, ToolCallID: "call_1__thought__c2lnbmF0dXJl", Name: "terminal"},
		{Role: event.RoleAssistant, ThinkingBlocks: []event.ThinkingBlock{{Thinking: "signed", Signature: &sig}}, Content: event.List[event.Content]{event.Text("ok")}},
		event.UserMessage("Continue."),
	}
	cases := []struct {
		name  string
		model string
		msgs  []event.Message
		tools []llm.ToolSpec
		edit  func(*llm.Config)
	}{
		{"agent turn, thinking", claude, conversation(), tools, nil},
		{"sampling and stop", "bedrock/amazon.nova-pro-v1:0", conversation(), tools, func(c *llm.Config) {
			c.Temperature, c.TopP, c.TopK = new(0.3), new(0.9), new(40.0)
		}},
		{"claude sampling", "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0", conversation(), tools, func(c *llm.Config) {
			c.Temperature, c.TopP, c.TopK, c.ReasoningEffort = new(0.3), new(0.9), new(40.0), "none"
		}},
		{"reasoning effort", "bedrock/us.anthropic.claude-opus-4-1-20250805-v1:0", conversation(), tools, func(c *llm.Config) { c.ReasoningEffort = "medium" }},
		{"history without tools", claude, conversation(), nil, nil},
		{"switch from gemini", claude, switched, tools, nil},
		{"no cache", claude, conversation(), tools, func(c *llm.Config) { c.CachingPrompt = false }},
	}
	var inputs []map[string]any
	var names []string
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
			l := newLLM(t, srv, tc.model, tc.edit)
			opts := &llm.CallOptions{Stop: []string{"</done>"}}
			op := "Converse"
			if stream {
				opts.OnDelta = func(llm.Delta) error { return nil }
				op = "ConverseStream"
			}
			if _, err := l.Completion(context.Background(), tc.msgs, tc.tools, opts); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var body map[string]any
			if err := json.Unmarshal(srv.LastRequest().RawBody, &body); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, map[string]any{"kind": "validate", "operation": op, "body": body})
			names = append(names, tc.name+" "+op)
		}
	}
	// The check can fail: a body with a key Converse does not have.
	inputs = append(inputs, map[string]any{"kind": "validate", "operation": "Converse", "body": map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": "x", "image": map[string]any{}}}}}, "max_tokens": 5,
	}})
	res := botocore(t, inputs)
	for i, r := range res[:len(names)] {
		if errs, _ := r["errors"].([]any); len(errs) > 0 {
			t.Errorf("%s: %v", names[i], errs)
		}
	}
	if errs, _ := res[len(names)]["errors"].([]any); len(errs) < 2 {
		t.Errorf("an invalid body passed the check: %v", errs)
	}
}

// TestEventStreamMatchesBotocore: the scripted server's ConverseStream
// bytes are the AWS event stream botocore decodes (checksums verified),
// and gohands' decoder reads the same messages from them.
func TestEventStreamMatchesBotocore(t *testing.T) {
	isolate(t)
	srv := llmtest.NewBedrock(t, llmtest.Reply{Reasoning: "hmm", Signature: "s", Text: "Hello there, reader.", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}}})
	resp, err := http.Post(srv.URL+"/model/m/converse-stream", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Header.Get("Content-Type") != eventstream.ContentType {
		t.Fatalf("%v, %s", err, resp.Header.Get("Content-Type"))
	}
	var ours []map[string]any
	for m, err := range eventstream.Messages(bytes.NewReader(raw)) {
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]any{}
		for k, v := range m.Headers {
			h[k] = v
		}
		ours = append(ours, map[string]any{"headers": h, "payload": string(m.Payload)})
	}
	res := botocore(t, []map[string]any{{"kind": "eventstream", "data_b64": base64.StdEncoding.EncodeToString(raw)}})
	theirs, _ := json.Marshal(res[0]["messages"])
	mine, _ := json.Marshal(ours)
	if len(ours) < 8 || !bytes.Equal(theirs, mine) {
		t.Errorf("botocore read\n%s\ngohands read\n%s", theirs, mine)
	}
}

// TestSSOMatchesBotocore: botocore's own SSO provider reads the same
// profile, the same cached login and trades it at the same portal call
// that ssoSetup's portal accepts, so gohands' file naming and request
// are the AWS SDK's.
func TestSSOMatchesBotocore(t *testing.T) {
	isolate(t)
	py := testenv.Reference158Python(t)
	ssoSetup(t, os.Getenv("AWS_CONFIG_FILE"), "777788889999", time.Now().Add(time.Hour))
	script := filepath.Join(t.TempDir(), "sso.py")
	if err := os.WriteFile(script, []byte("import botocore.session\nprint(botocore.session.Session(profile='dev').get_credentials().access_key)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") && v == "" {
			continue // botocore takes AWS_PROFILE="" for a profile named ""
		}
		cmd.Env = append(cmd.Env, kv)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "AKIDFROMSSO" {
		t.Fatalf("botocore: %q, %v\n%s", out, err, stderr.Bytes())
	}
	srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, claude, func(c *llm.Config) {
		c.AWSAccessKeyID, c.AWSSecretAccessKey, c.AWSProfileName = secret.String{}, secret.String{}, "dev"
	})
	if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if auth := srv.LastRequest().Header.Get("Authorization"); !strings.Contains(auth, "Credential=AKIDFROMSSO/") {
		t.Errorf("Authorization %q", auth)
	}
}

// TestAssumeRoleMatchesBotocore: botocore's STS client assumes the same
// role at the scripted STS with the same form gohands posts (signed for
// sts in the region), and reads the same keys from its answer.
func TestAssumeRoleMatchesBotocore(t *testing.T) {
	isolate(t)
	py := testenv.Reference158Python(t)
	forms := stsServer(t)
	script := filepath.Join(t.TempDir(), "sts.py")
	src := `import os, botocore.session
c = botocore.session.Session().create_client("sts", region_name="us-east-1", endpoint_url=os.environ["AWS_ENDPOINT_URL_STS"], aws_access_key_id="` + testKeyID + `", aws_secret_access_key="` + testSecret + `")
print(c.assume_role(RoleArn="arn:aws:iam::123456789012:role/bedrock", RoleSessionName="s2")["Credentials"]["AccessKeyId"])
`
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") && v == "" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "AKIDFROMROLE" {
		t.Fatalf("botocore: %q, %v\n%s", out, err, stderr.Bytes())
	}
	srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, claude, func(c *llm.Config) { c.AWSRoleName, c.AWSSessionName = "arn:aws:iam::123456789012:role/bedrock", "s2b" })
	if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if auth := srv.LastRequest().Header.Get("Authorization"); !strings.Contains(auth, "Credential=AKIDFROMROLE/") || srv.LastRequest().Header.Get("X-Amz-Security-Token") != "role-session-token-material" {
		t.Errorf("signed with %q", auth)
	}
	if len(*forms) != 2 {
		t.Fatalf("%d STS calls", len(*forms))
	}
	theirs, ours := (*forms)[0], (*forms)[1]
	theirs.Del("RoleSessionName")
	ours.Del("RoleSessionName")
	if theirs.Encode() != ours.Encode() {
		t.Errorf("form %s, botocore's %s", ours.Encode(), theirs.Encode())
	}
}
