package llmtest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

//go:embed testdata/sdk_validate.py
var sdkValidateScript []byte

// An SDKCase is a request body to check against an official SDK's request
// types.
type SDKCase struct {
	Name string
	Body json.RawMessage
}

// ValidateWithSDK checks request bodies of api ("anthropic" or "gemini")
// against the request types of the provider's official Python SDK
// (anthropic's MessageCreateParams, google-genai's Content, Tool,
// GenerationConfig and ToolConfig), unknown keys refused at every level;
// neither provider publishes a machine-readable document of its API. It
// runs testdata/sdk_validate.py in the reference venv (which holds both
// SDKs) and returns each case's violations by name, none for a valid one.
func ValidateWithSDK(t testing.TB, api string, cases []SDKCase) map[string][]string {
	t.Helper()
	py := testenv.ReferencePython(t)
	script := filepath.Join(t.TempDir(), "sdk_validate.py")
	if err := os.WriteFile(script, sdkValidateScript, 0o600); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(map[string]any{"api": api, "name": c.Name, "body": c.Body}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, script)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sdk_validate.py: %v\n%s", err, stderr.Bytes())
	}
	got := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r struct {
			Name   string   `json:"name"`
			Errors []string `json:"errors"`
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("sdk_validate.py output: %v\n%s", err, out)
		}
		got[r.Name] = r.Errors
	}
	if len(got) != len(cases) {
		t.Fatalf("sdk_validate.py judged %d cases of %d\n%s", len(got), len(cases), stderr.Bytes())
	}
	return got
}
