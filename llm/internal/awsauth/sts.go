package awsauth

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// roleCache keeps assumed-role keys until shortly before they expire, by
// base key, role and session name.
var roleCache struct {
	sync.Mutex
	m map[string]processKeys
}

// AssumeRole returns the temporary keys of role (an ARN) for a session of
// that name, got from STS with base's keys (the reference's aws_role_name
// and aws_session_name, as LiteLLM does it). STS is the region's endpoint
// unless AWS_STS_ENDPOINT (LiteLLM's) or AWS_ENDPOINT_URL_STS (the AWS
// SDKs') names another. Keys are reused until five minutes before they
// expire.
func AssumeRole(ctx context.Context, hc *http.Client, base Credentials, region, role, session string) (Credentials, error) {
	key := base.AccessKeyID + "\x00" + role + "\x00" + session
	roleCache.Lock()
	defer roleCache.Unlock()
	if k, ok := roleCache.m[key]; ok && time.Now().Add(5*time.Minute).Before(k.expiry) {
		return k.creds, nil
	}
	endpoint := os.Getenv("AWS_STS_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_STS")
	}
	if endpoint == "" {
		endpoint = "https://sts." + region + ".amazonaws.com"
	}
	form := url.Values{"Action": {"AssumeRole"}, "Version": {"2011-06-15"}, "RoleArn": {role}, "RoleSessionName": {session}}
	body := []byte(form.Encode())
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/", strings.NewReader(string(body)))
	if err != nil {
		return Credentials{}, fmt.Errorf("STS: %w", err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	Sign(r, body, base, region, "sts", time.Now())
	resp, err := hc.Do(r)
	if err != nil {
		return Credentials{}, fmt.Errorf("STS: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Credentials{}, fmt.Errorf("STS: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Code    string `xml:"Error>Code"`
			Message string `xml:"Error>Message"`
		}
		_ = xml.Unmarshal(data, &e)
		return Credentials{}, fmt.Errorf("STS refused to assume role %s with %s (HTTP %d %s: %s)", role, base, resp.StatusCode, e.Code, e.Message)
	}
	var out struct {
		Creds struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string
			SessionToken    string
			Expiration      string
		} `xml:"AssumeRoleResult>Credentials"`
	}
	if err := xml.Unmarshal(data, &out); err != nil || out.Creds.AccessKeyID == "" {
		return Credentials{}, fmt.Errorf("STS answered no keys for role %s", role)
	}
	c := out.Creds
	k := processKeys{creds: Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken, Source: "role " + role}}
	if k.expiry, err = time.Parse(time.RFC3339, c.Expiration); err != nil {
		return Credentials{}, fmt.Errorf("STS: Expiration %q of role %s is not a time", c.Expiration, role)
	}
	if roleCache.m == nil {
		roleCache.m = map[string]processKeys{}
	}
	roleCache.m[key] = k
	return k.creds, nil
}
