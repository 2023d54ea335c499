// Package bedrock is the gohands provider for AWS Bedrock's Converse API
// (Converse, and ConverseStream with its binary event stream), spoken in
// JSON over net/http and signed with Signature Version 4. Importing it
// registers it with package llm for "bedrock/" models, named as LiteLLM
// names them: bedrock/MODEL_ID, bedrock/converse/MODEL_ID, an inference
// profile (bedrock/us.anthropic.claude-...) or an ARN.
//
// Where a call goes: the config's base_url, else aws_bedrock_runtime_endpoint,
// else AWS_BEDROCK_RUNTIME_ENDPOINT, else the regional endpoint of the
// region that aws_region_name, the model's ARN, AWS_REGION_NAME,
// AWS_REGION, AWS_DEFAULT_REGION or the profile's region names (us-west-2
// when none does, as LiteLLM).
//
// How it is signed: an api_key (or AWS_BEARER_TOKEN_BEDROCK) is a Bedrock
// API key sent as a bearer token; otherwise the request is signed with
// the keys of the config, of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,
// or of the profile (aws_profile_name, AWS_PROFILE, default) in the shared
// credentials and config files: keys, a credential_process, or the role of
// an IAM Identity Center (SSO) profile after "aws sso login"; with
// aws_role_name, those keys assume the role through STS (aws_session_name
// names the session). Profiles that assume roles themselves (role_arn),
// web identity and instance metadata are not supported.
//
// Thinking blocks come back as event.ThinkingBlock values and are sent
// back with their signatures, as Claude on Bedrock requires during a tool
// loop. Prompt-cache marks become cachePoint blocks.
package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/awsauth"
	"github.com/gohands/gohands/llm/internal/httpapi"
)

func init() {
	llm.RegisterProvider(llm.APIBedrock, Provider{})
}

// Provider speaks the Bedrock Converse API. The zero value is ready to
// use; it holds no state.
type Provider struct {
	// Now, if set, is the clock requests are signed with (tests).
	Now func() time.Time
}

var _ llm.Provider = Provider{}

// service is the SigV4 signing name of the Bedrock runtime.
const service = "bedrock"

// defaultRegion is LiteLLM's region when nothing names one.
const defaultRegion = "us-west-2"

var regionPattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// Complete implements llm.Provider.
func (p Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	data, err := encodeBody(body, req.Config.ExtraBody)
	if err != nil {
		return nil, fmt.Errorf("bedrock: encoding the request: %w", err)
	}
	streamed := req.OnDelta != nil
	hr, secrets, err := p.newHTTPRequest(ctx, req, data, streamed)
	if err != nil {
		return nil, err
	}
	resp, err := p.do(req, hr, streamed)
	return resp, redact(err, secrets)
}

// do sends a signed request and reads its reply.
func (Provider) do(req *llm.Request, hr *http.Request, streamed bool) (*llm.Response, error) {
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, httpError(resp)
	}
	requestID := resp.Header.Get("X-Amzn-Requestid")
	if !streamed {
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("bedrock: reading the reply: %w", err)
		}
		var out converseResponse
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, malformed(fmt.Errorf("reply %.80q: %w", raw, err))
		}
		return toResponse(&out, requestID, req.Endpoint.Model), nil
	}
	return stream(resp.Body, req.OnDelta, requestID, req.Endpoint.Model)
}

// encodeBody encodes the request with the extra body keys set at its top
// level, replacing ours.
func encodeBody(b *converseRequest, extra map[string]any) ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	maps.Copy(m, extra)
	return json.Marshal(m)
}

// newHTTPRequest makes the signed POST of one call. It returns the
// secrets it was signed with, for errors to leave out: AWS's
// SignatureDoesNotMatch message quotes the canonical request, session
// token included.
func (p Provider) newHTTPRequest(ctx context.Context, req *llm.Request, body []byte, streamed bool) (*http.Request, []string, error) {
	cfg := req.Config
	region, err := Region(cfg, req.Endpoint.Model)
	if err != nil {
		return nil, nil, err
	}
	verb := "/converse"
	if streamed {
		verb = "/converse-stream"
	}
	u := strings.TrimSuffix(baseURL(cfg, req.Endpoint.BaseURL, region), "/") + "/model/" + awsauth.EscapeLabel(req.Endpoint.Model) + verb
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("bedrock: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", "gohands")
	hr.Header.Set("Accept", "application/json")
	if streamed {
		hr.Header.Set("Accept", "application/vnd.amazon.eventstream")
	}
	for k, v := range req.Endpoint.Headers {
		hr.Header.Set(k, v)
	}
	// A Bedrock API key is a bearer token; keys are signed with.
	if key := bearerToken(cfg); key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
		return hr, []string{key}, nil
	}
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	creds, err := awsauth.Find(ctx, hc, awsauth.Given{
		AccessKeyID:     cfg.AWSAccessKeyID.Value(),
		SecretAccessKey: cfg.AWSSecretAccessKey.Value(),
		SessionToken:    cfg.AWSSessionToken.Value(),
		Profile:         cfg.AWSProfileName,
	})
	if err != nil {
		return nil, nil, &llm.APIError{Kind: llm.ErrAuthentication, Message: "bedrock: " + err.Error()}
	}
	secrets := []string{creds.SecretAccessKey, creds.SessionToken}
	if role := cfg.AWSRoleName; role != "" {
		session := cfg.AWSSessionName
		if session == "" {
			session = fmt.Sprintf("gohands-session-%d", time.Now().Unix())
		}
		if creds, err = awsauth.AssumeRole(ctx, hc, creds, region, role, session); err != nil {
			return nil, nil, &llm.APIError{Kind: llm.ErrAuthentication, Message: "bedrock: " + err.Error()}
		}
		secrets = append(secrets, creds.SecretAccessKey, creds.SessionToken)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	awsauth.Sign(hr, body, creds, region, service, now())
	return hr, secrets, nil
}

// redact removes secrets from the message of a provider's error.
func redact(err error, secrets []string) error {
	var api *llm.APIError
	if !errors.As(err, &api) {
		return err
	}
	for _, s := range secrets {
		if len(s) >= 8 && strings.Contains(api.Message, s) {
			api.Message = strings.ReplaceAll(api.Message, s, "[redacted]")
		}
	}
	return err
}

func bearerToken(cfg *llm.Config) string {
	if k := cfg.APIKey.Value(); k != "" {
		return k
	}
	return os.Getenv("AWS_BEARER_TOKEN_BEDROCK")
}

// Region returns the region a call on model is signed for and sent to:
// aws_region_name, the model's ARN, AWS_REGION_NAME, AWS_REGION,
// AWS_DEFAULT_REGION, the profile's region, else us-west-2.
func Region(cfg *llm.Config, model string) (string, error) {
	region := cfg.AWSRegionName
	if region == "" {
		if rest, ok := strings.CutPrefix(model, "arn:"); ok {
			if parts := strings.SplitN(rest, ":", 5); len(parts) == 5 {
				region = parts[2]
			}
		}
	}
	for _, env := range []string{"AWS_REGION_NAME", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		if region == "" {
			region = os.Getenv(env)
		}
	}
	if region == "" {
		region = awsauth.Region(cfg.AWSProfileName)
	}
	if region == "" {
		region = defaultRegion
	}
	if !regionPattern.MatchString(region) {
		return "", fmt.Errorf("bedrock: region %q is not a region name (like us-east-1)", region)
	}
	return region, nil
}

// baseURL is where the runtime API is: base_url, the configured runtime
// endpoint, or the region's.
func baseURL(cfg *llm.Config, base, region string) string {
	switch {
	case base != "":
		return base
	case cfg.AWSBedrockRuntimeEndpoint != "":
		return cfg.AWSBedrockRuntimeEndpoint
	case os.Getenv("AWS_BEDROCK_RUNTIME_ENDPOINT") != "":
		return os.Getenv("AWS_BEDROCK_RUNTIME_ENDPOINT")
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://bedrock-runtime." + region + "." + suffix
}

// statusOfException maps the exception types Bedrock sends (in the
// X-Amzn-ErrorType header, a body's __type, or a stream's exception
// message) to the HTTP status that tells their kind.
var statusOfException = map[string]int{
	"ValidationException":           http.StatusBadRequest,
	"AccessDeniedException":         http.StatusForbidden,
	"UnrecognizedClientException":   http.StatusForbidden,
	"ExpiredTokenException":         http.StatusForbidden,
	"ResourceNotFoundException":     http.StatusNotFound,
	"ThrottlingException":           http.StatusTooManyRequests,
	"ServiceQuotaExceededException": http.StatusTooManyRequests,
	"ModelNotReadyException":        http.StatusTooManyRequests,
	"ModelTimeoutException":         http.StatusRequestTimeout,
	"ModelErrorException":           http.StatusInternalServerError,
	"ModelStreamErrorException":     http.StatusInternalServerError,
	"InternalServerException":       http.StatusInternalServerError,
	"ServiceUnavailableException":   http.StatusServiceUnavailable,
}

// exceptionType returns the bare exception name of an X-Amzn-ErrorType
// or __type value ("ThrottlingException:http://...", or with a namespace
// before "#").
func exceptionType(s string) string {
	s, _, _ = strings.Cut(s, ":")
	if _, after, ok := strings.Cut(s, "#"); ok {
		s = after
	}
	return s
}

// httpError classifies a failed answer: Bedrock's body is
// {"message": "..."}, its exception type in a header.
func httpError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	b := httpapi.ParseBody(raw)
	var typed struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(raw, &typed)
	code := exceptionType(resp.Header.Get("X-Amzn-Errortype"))
	if code == "" {
		code = exceptionType(typed.Type)
	}
	if code == "" {
		code = b.Code
	}
	status := resp.StatusCode
	if s, ok := statusOfException[code]; ok {
		status = s
	}
	return llm.NewAPIError(status, code, b.Message, resp.Header, nil)
}

// malformed reports a reply that is not what the API sends: a broken
// server or proxy, worth another try.
func malformed(err error) error {
	return &llm.APIError{Kind: llm.ErrServer, Message: "bedrock: malformed reply: " + err.Error(), Err: err}
}
