package awsauth

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ssoCache keeps SSO role keys until shortly before they expire, by
// start URL, account and role.
var ssoCache struct {
	m map[string]processKeys
}

// fromSSO gets the keys of an IAM Identity Center (SSO) profile's role:
// the access token "aws sso login" cached under ~/.aws/sso/cache is traded
// at the portal (GetRoleCredentials; AWS_ENDPOINT_URL_SSO overrides its
// address). An expired or missing login says to log in again.
func fromSSO(ctx context.Context, hc *http.Client, profile string, sec map[string]string, confFile string) (Credentials, error) {
	account, role := sec["sso_account_id"], sec["sso_role_name"]
	startURL, region, cacheKey := sec["sso_start_url"], sec["sso_region"], sec["sso_start_url"]
	if name := sec["sso_session"]; name != "" {
		s, ok, err := readSection(confFile, "sso-session "+name)
		if err != nil {
			return Credentials{}, err
		}
		if !ok {
			return Credentials{}, fmt.Errorf("AWS profile %q names sso_session %q, which %s does not define", profile, name, confFile)
		}
		startURL, region, cacheKey = s["sso_start_url"], s["sso_region"], name
	}
	if account == "" || role == "" || startURL == "" || region == "" {
		return Credentials{}, fmt.Errorf("AWS profile %q in %s lacks sso_account_id, sso_role_name, sso_start_url or sso_region", profile, confFile)
	}
	key := startURL + "\x00" + account + "\x00" + role
	processCache.Lock()
	defer processCache.Unlock()
	if k, ok := ssoCache.m[key]; ok && time.Now().Add(5*time.Minute).Before(k.expiry) {
		return k.creds, nil
	}
	login := fmt.Sprintf("run aws sso login --profile %s", profile)
	home, _ := os.UserHomeDir()
	sum := sha1.Sum([]byte(cacheKey))
	cached := filepath.Join(home, ".aws", "sso", "cache", hex.EncodeToString(sum[:])+".json")
	data, err := os.ReadFile(cached)
	if err != nil {
		return Credentials{}, fmt.Errorf("AWS profile %q: no SSO login cached (%s): %s", profile, cached, login)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
		ExpiresAt   string `json:"expiresAt"`
	}
	if json.Unmarshal(data, &tok) != nil || tok.AccessToken == "" {
		return Credentials{}, fmt.Errorf("AWS profile %q: the SSO login cached in %s is unreadable: %s", profile, cached, login)
	}
	if exp, err := time.Parse(time.RFC3339, tok.ExpiresAt); err != nil || !time.Now().Before(exp) {
		return Credentials{}, fmt.Errorf("AWS profile %q: the SSO login has expired: %s", profile, login)
	}
	base := os.Getenv("AWS_ENDPOINT_URL_SSO")
	if base == "" {
		base = "https://portal.sso." + region + ".amazonaws.com"
	}
	u := strings.TrimSuffix(base, "/") + "/federation/credentials?" + url.Values{"account_id": {account}, "role_name": {role}}.Encode()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Credentials{}, fmt.Errorf("AWS SSO portal: %w", err)
	}
	r.Header.Set("X-Amz-Sso_bearer_token", tok.AccessToken)
	resp, err := hc.Do(r)
	if err != nil {
		return Credentials{}, fmt.Errorf("AWS SSO portal: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		return Credentials{}, fmt.Errorf("AWS SSO portal refused role %s of account %s (HTTP %d: %s): %s", role, account, resp.StatusCode, e.Message, login)
	}
	var out struct {
		RoleCredentials struct {
			AccessKeyID     string `json:"accessKeyId"`
			SecretAccessKey string `json:"secretAccessKey"`
			SessionToken    string `json:"sessionToken"`
			Expiration      int64  `json:"expiration"` // ms since the epoch
		} `json:"roleCredentials"`
	}
	if json.Unmarshal(body, &out) != nil || out.RoleCredentials.AccessKeyID == "" {
		return Credentials{}, fmt.Errorf("AWS SSO portal answered no role keys")
	}
	rc := out.RoleCredentials
	k := processKeys{
		creds:  Credentials{AccessKeyID: rc.AccessKeyID, SecretAccessKey: rc.SecretAccessKey, SessionToken: rc.SessionToken, Source: fmt.Sprintf("SSO role %s of profile %q", role, profile)},
		expiry: time.UnixMilli(rc.Expiration),
	}
	if ssoCache.m == nil {
		ssoCache.m = map[string]processKeys{}
	}
	ssoCache.m[key] = k
	return k.creds, nil
}
