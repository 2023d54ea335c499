// Package awsauth signs requests to AWS with Signature Version 4 and finds
// the credentials to sign with where the AWS SDKs look: the values given,
// the AWS_* environment variables, then the shared credentials and config
// files (~/.aws/credentials, ~/.aws/config) under a profile.
//
// It reads static keys, runs a profile's credential_process and gets the
// role keys of an IAM Identity Center (SSO) profile with the token "aws
// sso login" cached; a profile that gets its keys otherwise (an assumed
// role, web identity) and
// instance or container metadata are reported as not supported, naming
// the profile.
package awsauth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Credentials are the keys a request is signed with. Source says where
// they came from, for messages; it never holds a secret.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Source                                     string
}

// String names the credentials' source only, so printing them leaks
// nothing.
func (c Credentials) String() string { return "AWS credentials from " + c.Source }

// ErrNoCredentials means no credentials were found anywhere.
var ErrNoCredentials = errors.New("no AWS credentials")

// Given are the credentials and profile a config sets; empty fields are
// looked up.
type Given struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Profile                                    string
}

// Find returns the credentials to use: the given keys, else
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN),
// else the profile's keys in the shared credentials file, then in the
// shared config file (keys, credential_process or SSO; hc fetches SSO
// role keys). The profile is the given one, else AWS_PROFILE, else
// "default"; an explicitly named profile that does not exist is an error.
func Find(ctx context.Context, hc *http.Client, g Given) (Credentials, error) {
	switch {
	case g.AccessKeyID != "" && g.SecretAccessKey != "":
		return Credentials{AccessKeyID: g.AccessKeyID, SecretAccessKey: g.SecretAccessKey, SessionToken: g.SessionToken, Source: "the config"}, nil
	case g.AccessKeyID != "" || g.SecretAccessKey != "":
		return Credentials{}, errors.New("aws_access_key_id and aws_secret_access_key must be set together")
	}
	if g.Profile == "" {
		id, key := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if id != "" && key != "" {
			return Credentials{AccessKeyID: id, SecretAccessKey: key, SessionToken: os.Getenv("AWS_SESSION_TOKEN"), Source: "the environment (AWS_ACCESS_KEY_ID)"}, nil
		}
	}
	profile, named := g.Profile, g.Profile != ""
	if profile == "" {
		profile, named = os.Getenv("AWS_PROFILE"), os.Getenv("AWS_PROFILE") != ""
	}
	if profile == "" {
		profile = "default"
	}
	credFile, confFile := SharedFiles()
	found := false
	for _, f := range []struct {
		path    string
		section string
	}{{credFile, profile}, {confFile, configSection(profile)}} {
		sec, ok, err := readSection(f.path, f.section)
		if err != nil {
			return Credentials{}, err
		}
		if !ok {
			continue
		}
		found = true
		id, key := sec["aws_access_key_id"], sec["aws_secret_access_key"]
		if id != "" && key != "" {
			return Credentials{AccessKeyID: id, SecretAccessKey: key, SessionToken: sec["aws_session_token"], Source: fmt.Sprintf("profile %q in %s", profile, f.path)}, nil
		}
		if cmd := sec["credential_process"]; cmd != "" {
			return fromProcess(cmd, fmt.Sprintf("the credential_process of profile %q in %s", profile, f.path))
		}
		if f.path == confFile && (sec["sso_session"] != "" || sec["sso_start_url"] != "") {
			return fromSSO(ctx, hc, profile, sec, confFile)
		}
		for _, k := range []string{"role_arn", "web_identity_token_file"} {
			if sec[k] != "" {
				return Credentials{}, fmt.Errorf("AWS profile %q in %s gets its keys with %s, which gohands does not support: export keys (aws configure export-credentials --profile %s --format env) or set aws_access_key_id and aws_secret_access_key", profile, f.path, k, profile)
			}
		}
	}
	if named && !found {
		return Credentials{}, fmt.Errorf("%w: AWS profile %q is in neither %s nor %s", ErrNoCredentials, profile, credFile, confFile)
	}
	return Credentials{}, fmt.Errorf("%w: set aws_access_key_id and aws_secret_access_key, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or keys for profile %q in %s", ErrNoCredentials, profile, credFile)
}

// Region returns the region of profile (AWS_PROFILE or "default" when
// empty) in the shared config file, "" if it sets none.
func Region(profile string) string {
	if profile == "" {
		profile = os.Getenv("AWS_PROFILE")
	}
	if profile == "" {
		profile = "default"
	}
	_, conf := SharedFiles()
	sec, _, _ := readSection(conf, configSection(profile))
	return sec["region"]
}

// SharedFiles returns the paths of the shared credentials and config
// files: AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE, else under
// ~/.aws.
func SharedFiles() (credentials, config string) {
	home, _ := os.UserHomeDir()
	credentials = os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if credentials == "" {
		credentials = filepath.Join(home, ".aws", "credentials")
	}
	config = os.Getenv("AWS_CONFIG_FILE")
	if config == "" {
		config = filepath.Join(home, ".aws", "config")
	}
	return credentials, config
}

// configSection is the section of a profile in the config file, where
// profiles other than the default are written "[profile NAME]".
func configSection(profile string) string {
	if profile == "default" {
		return "default"
	}
	return "profile " + profile
}

// readSection returns the keys of one [section] of an INI file. A missing
// file is no section; a file that cannot be read is an error.
func readSection(path, section string) (map[string]string, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading AWS settings: %w", err)
	}
	defer f.Close()
	var keys map[string]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "["); ok {
			name, _, _ = strings.Cut(name, "]")
			name = strings.Join(strings.Fields(name), " ")
			in = name == section
			if in && keys == nil {
				keys = map[string]string{}
			}
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		keys[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("reading AWS settings from %s: %w", path, err)
	}
	return keys, keys != nil, nil
}

// Time formats of Signature Version 4.
const (
	amzDate   = "20060102T150405Z"
	scopeDate = "20060102"
	algorithm = "AWS4-HMAC-SHA256"
)

// Sign adds Signature Version 4 authentication to r, whose body is body,
// for service in region at time now: X-Amz-Date, X-Amz-Security-Token
// with a session token, and Authorization. The host, Content-Type and
// every X-Amz-* header are signed.
func Sign(r *http.Request, body []byte, c Credentials, region, service string, now time.Time) {
	now = now.UTC()
	r.Header.Set("X-Amz-Date", now.Format(amzDate))
	if c.SessionToken != "" {
		r.Header.Set("X-Amz-Security-Token", c.SessionToken)
	} else {
		r.Header.Del("X-Amz-Security-Token")
	}
	r.Header.Del("Authorization")

	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	headers := map[string]string{"host": host}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if lk == "content-type" || strings.HasPrefix(lk, "x-amz-") {
			headers[lk] = strings.Join(slices.Clone(vs), ",")
		}
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	slices.Sort(names)
	var canon strings.Builder
	canon.WriteString(r.Method + "\n")
	canon.WriteString(escapePath(r.URL.EscapedPath()) + "\n")
	canon.WriteString(canonicalQuery(r) + "\n")
	for _, k := range names {
		canon.WriteString(k + ":" + strings.Join(strings.Fields(headers[k]), " ") + "\n")
	}
	signed := strings.Join(names, ";")
	canon.WriteString("\n" + signed + "\n")
	canon.WriteString(hashHex(body))

	scope := now.Format(scopeDate) + "/" + region + "/" + service + "/aws4_request"
	toSign := algorithm + "\n" + now.Format(amzDate) + "\n" + scope + "\n" + hashHex([]byte(canon.String()))
	key := hmacSHA256([]byte("AWS4"+c.SecretAccessKey), now.Format(scopeDate))
	for _, s := range []string{region, service, "aws4_request"} {
		key = hmacSHA256(key, s)
	}
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	r.Header.Set("Authorization", algorithm+" Credential="+c.AccessKeyID+"/"+scope+", SignedHeaders="+signed+", Signature="+sig)
}

// escapePath is the canonical URI of every service but S3: the path as
// sent, percent-encoded once more (so %3A is signed as %253A), "/" kept.
func escapePath(p string) string {
	if p == "" {
		return "/"
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if unreserved(c) || c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalQuery is the query sorted by key and value, each encoded the
// SigV4 way.
func canonicalQuery(r *http.Request) string {
	q := r.URL.Query()
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, encode(k)+"="+encode(v))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

func encode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; unreserved(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// unreserved reports the characters SigV4 leaves unencoded.
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~'
}

// EscapeLabel encodes one path segment (a model id or ARN) as the AWS
// SDKs do: everything but the unreserved characters, "/" and ":" included.
func EscapeLabel(s string) string { return encode(s) }

func hashHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// processTimeout bounds a credential_process (an SSO login helper that
// waits for a browser must not hang a call for ever).
const processTimeout = time.Minute

// processCache keeps the keys a credential_process gave until shortly
// before they expire, by command.
var processCache struct {
	sync.Mutex
	m map[string]processKeys
}

type processKeys struct {
	creds  Credentials
	expiry time.Time // zero: never
}

// fromProcess runs a profile's credential_process (split into words as
// the AWS CLI splits it, run without a shell) and reads the keys it
// prints: {"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken",
// "Expiration"}. Keys with an expiration are reused until five minutes
// before it.
func fromProcess(command, source string) (Credentials, error) {
	processCache.Lock()
	defer processCache.Unlock()
	if k, ok := processCache.m[command]; ok && (k.expiry.IsZero() || time.Now().Add(5*time.Minute).Before(k.expiry)) {
		return k.creds, nil
	}
	args := splitCommand(command)
	if len(args) == 0 {
		return Credentials{}, fmt.Errorf("%s is empty", source)
	}
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// Its standard error says why; its output may hold keys.
		return Credentials{}, fmt.Errorf("%s failed: %w: %s", source, err, strings.TrimSpace(stderr.String()))
	}
	var v struct {
		Version         int
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	if json.Unmarshal(out, &v) != nil || v.Version != 1 || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		return Credentials{}, fmt.Errorf("%s printed no keys (want JSON with Version 1, AccessKeyId and SecretAccessKey)", source)
	}
	k := processKeys{creds: Credentials{AccessKeyID: v.AccessKeyID, SecretAccessKey: v.SecretAccessKey, SessionToken: v.SessionToken, Source: source}}
	if v.Expiration != "" {
		if k.expiry, err = time.Parse(time.RFC3339, v.Expiration); err != nil {
			return Credentials{}, fmt.Errorf("%s: Expiration %q is not an RFC 3339 time", source, v.Expiration)
		}
	}
	if processCache.m == nil {
		processCache.m = map[string]processKeys{}
	}
	processCache.m[command] = k
	return k.creds, nil
}

// splitCommand splits a command line into words: blanks separate them,
// single and double quotes group, a backslash escapes the next character
// (outside single quotes).
func splitCommand(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, escaped := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			cur.WriteByte(c)
			escaped = false
		case c == '\\' && quote != '\'':
			escaped, in = true, true
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
