package awsauth

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSplitCommand: a credential_process line is split as the AWS CLI
// splits it.
func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`aws-vault exec work --json`:          {"aws-vault", "exec", "work", "--json"},
		`"/opt/my tools/creds" 'a b' c\ d  e`: {"/opt/my tools/creds", "a b", "c d", "e"},
		`x "say \"hi\"" ''`:                   {"x", `say "hi"`, ""},
		"  ":                                  nil,
	} {
		if got := splitCommand(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestProcessCached: keys with a far expiration are reused without
// running the process again; keys about to expire are not.
func TestProcessCached(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		expiration string
		runs       int
	}{{"2999-01-01T00:00:00Z", 1}, {"2000-01-01T00:00:00Z", 3}} {
		os.Remove(count)
		script := filepath.Join(dir, "creds-"+tc.expiration[:4]+".sh")
		body := `echo run >> "` + count + `"; echo '{"Version": 1, "AccessKeyId": "AKID", "SecretAccessKey": "s", "Expiration": "` + tc.expiration + `"}'`
		if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			c, err := fromProcess("/bin/sh "+script, "test")
			if err != nil || c.AccessKeyID != "AKID" {
				t.Fatalf("%+v, %v", c, err)
			}
		}
		b, _ := os.ReadFile(count)
		if n := strings.Count(string(b), "run"); n != tc.runs {
			t.Errorf("expiring %s: %d runs for 3 calls, want %d", tc.expiration, n, tc.runs)
		}
	}
}
