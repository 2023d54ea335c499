package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestRefreshBeforeExpiry: a cached token is used until refreshMargin
// before it expires, then exchanged anew, on a moved clock.
func TestRefreshBeforeExpiry(t *testing.T) {
	tok := llmtest.NewTokenServer(t)
	cred, err := readCredentials(tok.ServiceAccount(t, "p"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	at := start
	now = func() time.Time { return at }
	t.Cleanup(func() { now = time.Now })
	get := func() string {
		v, err := cred.token(context.Background(), http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := get()
	for _, step := range []struct {
		after time.Duration
		fresh bool
	}{{time.Minute, false}, {time.Hour - refreshMargin - time.Second, false}, {time.Hour - refreshMargin + time.Second, true}} {
		at = start.Add(step.after)
		if got := get(); (got != first) != step.fresh {
			t.Errorf("at +%v: token %q (first %q), want fresh=%v", step.after, got, first, step.fresh)
		}
	}
	if n := len(tok.Exchanges()); n != 2 {
		t.Errorf("%d exchanges, want 2", n)
	}
}

// TestBaseURL: the API roots of locations, as Google's SDKs name them.
func TestBaseURL(t *testing.T) {
	for loc, want := range map[string]string{
		"us-central1": "https://us-central1-aiplatform.googleapis.com",
		"global":      "https://aiplatform.googleapis.com",
		"eu":          "https://aiplatform.eu.rep.googleapis.com",
	} {
		if got := baseURL(loc); got != want {
			t.Errorf("%s: %s, want %s", loc, got, want)
		}
	}
}

// TestTokenRequestsMatchGoogleAuth: google-auth (Google's library, from
// the reference venv) exchanges the same service account key and gcloud
// credentials at the same token endpoint with the same form, and the
// service account's JWT has the same header and claims (times aside) as
// gohands'.
func TestTokenRequestsMatchGoogleAuth(t *testing.T) {
	py := testenv.Reference158Python(t)
	tok := llmtest.NewTokenServer(t)
	sa, adc := tok.ServiceAccount(t, "p"), tok.AuthorizedUser(t, "q")
	script := `
import json, sys
import google.auth.transport.requests as tr
from google.oauth2 import service_account, credentials
sa = service_account.Credentials.from_service_account_file(sys.argv[1], scopes=["https://www.googleapis.com/auth/cloud-platform"])
sa.refresh(tr.Request())
# google-auth sends authorized users to Google's endpoint whatever the
# file says; the test's endpoint is given instead (gohands honours the
# file's token_uri).
info = json.load(open(sys.argv[2]))
au = credentials.Credentials(None, refresh_token=info["refresh_token"], client_id=info["client_id"], client_secret=info["client_secret"], token_uri=info["token_uri"])
au.refresh(tr.Request())
print(sa.token, au.token)
`
	path := filepath.Join(t.TempDir(), "auth.py")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, path, sa, adc)
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || !strings.HasPrefix(string(out), "ya29.") {
		t.Fatalf("google-auth: %q, %v\n%s", out, err, stderr.Bytes())
	}
	for _, file := range []string{sa, adc} {
		c, err := readCredentials(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.token(context.Background(), http.DefaultClient); err != nil {
			t.Fatal(err)
		}
	}
	ex := tok.Exchanges()
	if len(ex) != 4 {
		t.Fatalf("%d exchanges", len(ex))
	}
	for i, name := range []string{"service account", "authorized user"} {
		theirs, ours := ex[i], ex[i+2]
		if ours.Token == "" || theirs.Token == "" {
			t.Errorf("%s: refused: %+v / %+v", name, theirs, ours)
		}
		if !reflect.DeepEqual(formKeys(ours.Form), formKeys(theirs.Form)) || ours.Form["grant_type"] != theirs.Form["grant_type"] {
			t.Errorf("%s: form %v, google-auth's %v", name, ours.Form, theirs.Form)
		}
	}
	times := func(c map[string]any) (float64, float64) { return c["iat"].(float64), c["exp"].(float64) }
	oi, oe := times(ex[2].Claims)
	ti, te := times(ex[0].Claims)
	if oe-oi != te-ti {
		t.Errorf("token lifetime asked %v s, google-auth %v s", oe-oi, te-ti)
	}
	strip := func(m map[string]any) string {
		c := map[string]any{}
		for k, v := range m {
			if k != "iat" && k != "exp" {
				c[k] = v
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	if strip(ex[2].Claims) != strip(ex[0].Claims) || strip(ex[2].Header) != strip(ex[0].Header) {
		t.Errorf("JWT %s %s, google-auth's %s %s", strip(ex[2].Header), strip(ex[2].Claims), strip(ex[0].Header), strip(ex[0].Claims))
	}
}

func formKeys(f map[string]string) []string {
	var ks []string
	for k := range f {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
