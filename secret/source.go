package secret

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
)

// Source is a named secret's origin: a stored value or a URL to fetch it
// from. Sources are values of a registered kind, so a Registry persists them.
type Source interface {
	// Resolve returns the secret's plaintext.
	Resolve(ctx context.Context) (string, error)
	// Describe returns the optional description shown to the model.
	Describe() string
}

// StaticSecret is a secret stored with the conversation.
type StaticSecret struct {
	Description string `json:"description,omitempty"`
	Value       String `json:"value,omitzero"`
}

// Resolve implements Source.
func (s *StaticSecret) Resolve(context.Context) (string, error) { return s.Value.Value(), nil }

// Describe implements Source.
func (s *StaticSecret) Describe() string { return s.Description }

// MapSecrets implements Holder.
func (s *StaticSecret) MapSecrets(f func(String) (String, error)) (any, error) {
	v, err := mapOne(f, s.Value)
	if err != nil {
		return nil, err
	}
	return &StaticSecret{Description: s.Description, Value: v}, nil
}

// InternalServerURLEnv names the variable holding the base URL that relative
// LookupSecret URLs are resolved against (DefaultInternalServerURL if unset).
const (
	InternalServerURLEnv     = "OH_INTERNAL_SERVER_URL"
	DefaultInternalServerURL = "http://127.0.0.1:8000"
)

// LookupTimeout bounds one LookupSecret fetch.
const LookupTimeout = 30 * time.Second

// LookupSecret is a secret fetched by an HTTP GET of URL; the response body
// is the value. Headers whose name looks secret (see IsSecretKey) are
// themselves secrets: redacted, or encrypted with a Cipher, when persisted.
type LookupSecret struct {
	Description string            `json:"description,omitempty"`
	URL         string            `json:"url"`
	Headers     map[string]String `json:"headers" wire:"emitempty"`
}

// lookupFields is LookupSecret without its methods, for the codec.
type lookupFields LookupSecret

// MarshalJSON implements json.Marshaler. Headers that do not look secret are
// written in plaintext; secret ones as their String encodes.
func (s *LookupSecret) MarshalJSON() ([]byte, error) {
	w := lookupFields(*s)
	w.Headers = make(map[string]String, len(s.Headers))
	for k, v := range s.Headers {
		if !IsSecretKey(k) {
			v = v.Expose()
		}
		w.Headers[k] = v
	}
	return event.MarshalJSON(w)
}

// UnmarshalJSON implements json.Unmarshaler. As in the reference, a relative
// URL is resolved against the internal server URL, and secret headers that
// were redacted are dropped.
func (s *LookupSecret) UnmarshalJSON(data []byte) error {
	var w lookupFields
	if err := event.UnmarshalJSON(data, &w); err != nil {
		return err
	}
	if w.URL == "" {
		return fmt.Errorf("LookupSecret: url is required")
	}
	w.URL = resolveURL(w.URL)
	maps.DeleteFunc(w.Headers, func(_ string, v String) bool { return v.IsZero() })
	if len(w.Headers) == 0 {
		w.Headers = nil
	}
	*s = LookupSecret(w)
	return nil
}

// Resolve implements Source: it fetches the URL with the headers.
func (s *LookupSecret) Resolve(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, LookupTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, resolveURL(s.URL), nil)
	if err != nil {
		return "", fmt.Errorf("secret: lookup: %w", err)
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v.Value())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("secret: lookup: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("secret: lookup %s: %w", req.URL.Redacted(), err)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("secret: lookup %s: %s", req.URL.Redacted(), resp.Status)
	}
	return string(body), nil
}

// Describe implements Source.
func (s *LookupSecret) Describe() string { return s.Description }

// MapSecrets implements Holder: f is applied to the secret headers.
func (s *LookupSecret) MapSecrets(f func(String) (String, error)) (any, error) {
	out := &LookupSecret{Description: s.Description, URL: s.URL}
	if s.Headers != nil {
		out.Headers = make(map[string]String, len(s.Headers))
	}
	for k, v := range s.Headers {
		if IsSecretKey(k) {
			var err error
			if v, err = mapOne(f, v); err != nil {
				return nil, fmt.Errorf("header %s: %w", k, err)
			}
		}
		out.Headers[k] = v
	}
	return out, nil
}

func resolveURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "" || p.Host != "" {
		return u
	}
	base := os.Getenv(InternalServerURLEnv)
	if base == "" {
		base = DefaultInternalServerURL
	}
	b, err := url.Parse(strings.TrimRight(base, "/") + "/")
	if err != nil {
		return u
	}
	return b.ResolveReference(p).String()
}

// secretKeyParts are the name fragments that mark a key as holding a secret.
var secretKeyParts = []string{"AUTHORIZATION", "COOKIE", "CREDENTIAL", "KEY", "PASSWORD", "SECRET", "SESSION", "TOKEN"}

// IsSecretKey reports whether a header or variable name looks like it holds
// a secret (case-insensitive substring match, as the reference does).
func IsSecretKey(key string) bool {
	k := strings.ToUpper(key)
	for _, p := range secretKeyParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

func mapOne(f func(String) (String, error), s String) (String, error) {
	if s.IsZero() {
		return s, nil
	}
	return f(s)
}

// Registry holds a conversation's named secrets. Its JSON is the reference's
// SecretRegistry: {"secret_sources":{name: source}}.
type Registry struct {
	Sources map[string]Source `json:"secret_sources" wire:"emitempty"`
}

// registryFields is Registry without its methods: the codec writes each
// source with its kind and reads it back by its kind.
type registryFields Registry

// MarshalJSON implements json.Marshaler.
func (r Registry) MarshalJSON() ([]byte, error) { return event.MarshalJSON(registryFields(r)) }

// UnmarshalJSON implements json.Unmarshaler. A source of an unknown kind is
// an error naming the secret.
func (r *Registry) UnmarshalJSON(data []byte) error {
	var w registryFields
	if err := event.UnmarshalJSON(data, &w); err != nil {
		return err
	}
	if len(w.Sources) == 0 {
		w.Sources = nil
	}
	*r = Registry(w)
	return nil
}

// MapSecrets implements Holder. Sources that are not Holders are kept as
// they are.
func (r Registry) MapSecrets(f func(String) (String, error)) (any, error) {
	out := Registry{}
	if r.Sources != nil {
		out.Sources = make(map[string]Source, len(r.Sources))
	}
	for name, src := range r.Sources {
		if h, ok := src.(Holder); ok {
			v, err := h.MapSecrets(f)
			if err != nil {
				return nil, fmt.Errorf("secret %s: %w", name, err)
			}
			src = v.(Source)
		}
		out.Sources[name] = src
	}
	return out, nil
}

// Set adds or replaces the source of name.
func (r *Registry) Set(name string, src Source) {
	if r.Sources == nil {
		r.Sources = make(map[string]Source)
	}
	r.Sources[name] = src
}

// SetValue stores value as the StaticSecret name.
func (r *Registry) SetValue(name, value string) { r.Set(name, &StaticSecret{Value: New(value)}) }

func init() {
	event.RegisterKind[StaticSecret]("StaticSecret")
	event.RegisterKind[LookupSecret]("LookupSecret")
}
