package secret

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/event"
	"golang.org/x/sync/singleflight"
)

// Hidden replaces secret values in tool output and persisted events.
const Hidden = "<secret-hidden>"

// FailedLookupRetry is how long a source that failed to resolve is left
// alone by Manager.Mask before it is tried again: masking runs on every
// output and must not hammer (or wait on) a failing lookup server.
const FailedLookupRetry = 60 * time.Second

// Callback is a late-bound secret: Func is called whenever the value is
// needed (a token that rotates, a value from a keychain). Callbacks live only
// in memory: they cannot be serialised, so a Manager leaves them out of its
// Registry and they must be given again after a conversation is reloaded.
type Callback struct {
	Description string
	Func        func(ctx context.Context) (string, error)
}

// Resolve implements Source.
func (c *Callback) Resolve(ctx context.Context) (string, error) {
	if c.Func == nil {
		return "", errors.New("secret: callback has no function")
	}
	return c.Func(ctx)
}

// Describe implements Source.
func (c *Callback) Describe() string { return c.Description }

// Info is a secret's name and description, as shown to the model.
type Info struct {
	Name        string
	Description string
}

// ManagerOptions configure a Manager. A nil *ManagerOptions is the default.
type ManagerOptions struct {
	// Logger receives resolution failures; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock used for the FailedLookupRetry back-off; nil means
	// time.Now.
	Now func() time.Time
}

// Manager is a conversation's live secret registry: the named sources,
// the values they last resolved to, and the masking of those values. It is
// safe for concurrent use and may be updated while a conversation runs.
//
// A Manager resolves sources outside its lock, so a slow LookupSecret never
// blocks masking or updates from other goroutines.
type Manager struct {
	log *slog.Logger
	now func() time.Time

	flight singleflight.Group

	mu      sync.Mutex
	sources map[string]Source
	gen     map[string]uint64    // bumped when a name's source changes
	values  map[string]string    // last value each name resolved to
	retired map[string]struct{}  // values of replaced sources, still masked
	failed  map[string]time.Time // when a name last failed to resolve
}

// NewManager returns a Manager holding the sources of r (typically the
// registry loaded with a conversation's state). r is not retained.
func NewManager(r Registry, opts *ManagerOptions) *Manager {
	var o ManagerOptions
	if opts != nil {
		o = *opts
	}
	m := &Manager{
		log: cmp.Or(o.Logger, slog.Default()), now: o.Now,
		sources: make(map[string]Source, len(r.Sources)),
		gen:     make(map[string]uint64),
		values:  make(map[string]string),
		retired: make(map[string]struct{}),
		failed:  make(map[string]time.Time),
	}
	if m.now == nil {
		m.now = time.Now
	}
	maps.Copy(m.sources, r.Sources)
	return m
}

// Update adds or replaces the given sources. A replaced secret's old value
// stays masked: it may already be in the shell's history or in output the
// agent has yet to see. A nil source is an error and changes nothing.
func (m *Manager) Update(sources map[string]Source) error {
	for name, src := range sources {
		if name == "" {
			return errors.New("secret: empty secret name")
		}
		if src == nil {
			return fmt.Errorf("secret %s: nil source", name)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, src := range sources {
		m.sources[name] = src
		m.gen[name]++
		if v, ok := m.values[name]; ok {
			m.retired[v] = struct{}{}
			delete(m.values, name)
		}
		delete(m.failed, name)
	}
	return nil
}

// MinHiddenLen is the shortest value Hide masks: a shorter one cannot be a
// real credential, and masking it would garble ordinary output.
const MinHiddenLen = 8

// Hide masks values without making them secrets the agent may use: no
// name, not offered to the model, never exported to commands. It is for
// the credentials the application holds itself (the model's API key, an MCP
// server's headers). Values shorter than MinHiddenLen are ignored.
func (m *Manager) Hide(values ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range values {
		if len(v) >= MinHiddenLen {
			m.retired[v] = struct{}{}
		}
	}
}

// Set adds or replaces the source of name.
func (m *Manager) Set(name string, src Source) error {
	return m.Update(map[string]Source{name: src})
}

// SetValue stores value as the static secret name.
func (m *Manager) SetValue(name, value string) error {
	return m.Set(name, &StaticSecret{Value: New(value)})
}

// SetFunc makes name a late-bound secret resolved by calling f.
func (m *Manager) SetFunc(name string, f func(ctx context.Context) (string, error)) error {
	if f == nil {
		return fmt.Errorf("secret %s: nil function", name)
	}
	return m.Set(name, &Callback{Func: f})
}

// Names returns the names of the registered secrets, sorted.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.sources))
}

// Infos returns the name and description of every secret, sorted by name,
// for the system prompt.
func (m *Manager) Infos() []Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Info, 0, len(m.sources))
	for _, name := range slices.Sorted(maps.Keys(m.sources)) {
		out = append(out, Info{Name: name, Description: m.sources[name].Describe()})
	}
	return out
}

// Mentioned returns, sorted, the names of the secrets that text refers to:
// those whose name occurs in it, ignoring case (the reference's rule; it
// errs on the side of exporting).
func (m *Manager) Mentioned(text string) []string {
	lower := strings.ToLower(text)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name := range m.sources {
		if strings.Contains(lower, strings.ToLower(name)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// EnvFor returns the secrets that command mentions, freshly resolved, as
// variables for the terminal to export before running it. Secrets that fail
// to resolve or resolve to "" are left out (the failure is logged); the
// values returned are remembered for masking.
func (m *Manager) EnvFor(ctx context.Context, command string) map[string]string {
	names := m.Mentioned(command)
	if len(names) == 0 {
		return nil
	}
	env := make(map[string]string, len(names))
	for _, name := range names {
		if v, err := m.resolve(ctx, name); err == nil && v != "" {
			env[name] = v
		}
	}
	return env
}

// Value resolves the named secret and remembers the value for masking.
func (m *Manager) Value(ctx context.Context, name string) (string, error) {
	return m.resolve(ctx, name)
}

// ErrNotFound is returned by Value for a name with no secret.
var ErrNotFound = errors.New("secret: no such secret")

// resolve calls name's source without holding the lock and records the
// outcome, unless the source was replaced meanwhile.
func (m *Manager) resolve(ctx context.Context, name string) (string, error) {
	m.mu.Lock()
	src, ok := m.sources[name]
	gen := m.gen[name]
	m.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	// Callers resolving the same source at once (parallel tool calls
	// masking their output) share one resolution: one HTTP request.
	r, err, _ := m.flight.Do(name+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		return src.Resolve(ctx)
	})
	v, _ := r.(string)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen[name] != gen {
		// Replaced while resolving: still mask what we got, since a caller
		// may print it, but do not let it stand for the new source.
		if err == nil && v != "" {
			m.retired[v] = struct{}{}
		}
		return v, err
	}
	if err != nil {
		if ctx.Err() == nil { // a cancelled caller says nothing about the source
			m.failed[name] = m.now()
		}
		m.log.Warn("secret: cannot resolve", "name", name, "error", err)
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	delete(m.failed, name)
	if v == "" {
		// Nothing to mask, and worth no retry before the back-off: a lookup
		// that answers empty would otherwise be fetched on every output.
		m.failed[name] = m.now()
	} else {
		if old, ok := m.values[name]; ok && old != v {
			// A rotated value (a callback) keeps its old value masked.
			m.retired[old] = struct{}{}
		}
		m.values[name] = v
	}
	return v, nil
}

// Mask returns text with every known secret value replaced by Hidden. It
// first resolves the secrets that have no value yet, so a value is masked
// even when no command named it (a token inside a git remote URL), but a
// source that failed is not tried again for FailedLookupRetry. Overlapping
// and adjacent values are masked as one span, so no part of either shows;
// the empty value masks nothing.
func (m *Manager) Mask(text string) string {
	return m.MaskContext(context.Background(), text)
}

// MaskContext is Mask with a context for the resolutions it makes.
func (m *Manager) MaskContext(ctx context.Context, text string) string {
	if text == "" {
		return text
	}
	for _, name := range m.unresolved() {
		m.resolve(ctx, name) // failures are logged and backed off
	}
	return maskValues(text, m.knownValues())
}

// PartialSuffix returns the length of the longest end of text that is the
// beginning of a secret value, but not all of it: the bytes a reader of a
// stream must hold back until more text shows whether a secret follows, so
// that no secret is ever shown in part (Mask hides whole values only).
func (m *Manager) PartialSuffix(text string) int {
	if text == "" {
		return 0
	}
	ctx := context.Background()
	for _, name := range m.unresolved() {
		m.resolve(ctx, name)
	}
	return partialSuffix(text, m.knownValues())
}

// PartialPrefix returns the length of the longest beginning of text that
// is the end of a secret value, but not all of it: the bytes a reader that
// lost the text before (a bounded buffer dropping its oldest bytes) must
// drop too, since Mask cannot recognise part of a value.
func (m *Manager) PartialPrefix(text string) int {
	if text == "" {
		return 0
	}
	ctx := context.Background()
	for _, name := range m.unresolved() {
		m.resolve(ctx, name)
	}
	return partialPrefix(text, m.knownValues())
}

func partialPrefix(text string, values []string) int {
	best := 0
	for _, v := range values {
		for k := min(len(v)-1, len(text)); k > best; k-- {
			if strings.HasPrefix(text, v[len(v)-k:]) {
				best = k
				break
			}
		}
	}
	return best
}

func partialSuffix(text string, values []string) int {
	best := 0
	for _, v := range values {
		for k := min(len(v)-1, len(text)); k > best; k-- {
			if strings.HasSuffix(text, v[:k]) {
				best = k
				break
			}
		}
	}
	return best
}

// unresolved returns the names that have no value yet and are not backing
// off after a failure.
func (m *Manager) unresolved() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []string
	for name := range m.sources {
		if _, ok := m.values[name]; ok {
			continue
		}
		if at, ok := m.failed[name]; ok && now.Sub(at) < FailedLookupRetry {
			continue
		}
		out = append(out, name)
	}
	return out
}

// knownValues returns every value to mask, longest first.
func (m *Manager) knownValues() []string {
	m.mu.Lock()
	vals := make([]string, 0, len(m.values)+len(m.retired))
	for _, v := range m.values {
		vals = append(vals, v)
	}
	for v := range m.retired {
		vals = append(vals, v)
	}
	m.mu.Unlock()
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(vals)
}

// maskValues replaces every occurrence of every value with Hidden. All
// occurrences are found first and merged into spans, so a value that
// overlaps another is hidden whole instead of leaving a tail visible.
func maskValues(text string, values []string) string {
	type span struct{ lo, hi int }
	var spans []span
	for _, v := range values {
		if v == "" {
			continue
		}
		for off := 0; ; {
			i := strings.Index(text[off:], v)
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, off + i + len(v)})
			off += i + 1
		}
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		for i++; i < len(spans) && spans[i].lo <= hi; i++ {
			hi = max(hi, spans[i].hi)
		}
		b.WriteString(text[pos:lo])
		b.WriteString(Hidden)
		pos = hi
	}
	b.WriteString(text[pos:])
	return b.String()
}

// MaskEvent returns e with every known secret value replaced by Hidden in
// all its text: the strings of the event, its action and observation, and
// JSON kept verbatim. The loop calls it on each event before it is
// persisted or shown, so no tool, not only the terminal, can leak a secret
// into the log. It resolves unresolved secrets as MaskContext does.
//
// When no value occurs in the event, e itself is returned, so the common
// case costs one read of its strings and no copy; otherwise a masked copy is, and e is
// left as it was. An error means e could not be encoded or copied.
func (m *Manager) MaskEvent(ctx context.Context, e event.Event) (event.Event, error) {
	for _, name := range m.unresolved() {
		m.resolve(ctx, name)
	}
	vals := m.knownValues()
	if len(vals) == 0 {
		return e, nil
	}
	escaped := make([]string, 0, len(vals))
	for _, v := range vals {
		if q, err := event.MarshalJSON(v); err == nil && len(q) >= 2 {
			escaped = append(escaped, string(q[1:len(q)-1]))
		}
	}
	if !hasValue(reflect.ValueOf(e), vals, escaped) {
		return e, nil
	}
	data, err := event.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("secret: mask event: %w", err)
	}
	cp, err := event.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("secret: mask event: copy: %w", err)
	}
	maskValue(reflect.ValueOf(cp), vals, escaped)
	return cp, nil
}

// hasValue reports whether any string reachable from v contains one of
// vals, or any JSON kept verbatim one of escaped (the values as they
// appear inside JSON strings).
func hasValue(v reflect.Value, vals, escaped []string) bool {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		for _, x := range vals {
			if x != "" && strings.Contains(s, x) {
				return true
			}
		}
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && hasValue(v.Elem(), vals, escaped)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && hasValue(v.Field(i), vals, escaped) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Kind() == reflect.Slice {
				b := v.Bytes()
				for _, x := range escaped {
					if x != "" && bytes.Contains(b, []byte(x)) {
						return true
					}
				}
			}
			return false
		}
		for i := range v.Len() {
			if hasValue(v.Index(i), vals, escaped) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if hasValue(it.Value(), vals, escaped) {
				return true
			}
		}
	}
	return false
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// maskValue masks every string reachable from v in place. v must be a
// freshly decoded copy: it is modified. JSON kept verbatim (json.RawMessage)
// is masked in its encoded form, and replaced whole by a Hidden string if
// masking would break it.
func maskValue(v reflect.Value, vals, escaped []string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := maskValues(v.String(), vals); s != v.String() {
				v.SetString(s)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			maskValue(v.Elem(), vals, escaped)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		elem := v.Elem()
		if elem.Kind() == reflect.Pointer {
			maskValue(elem, vals, escaped)
			return
		}
		if v.CanSet() {
			c := reflect.New(elem.Type()).Elem()
			c.Set(elem)
			maskValue(c, vals, escaped)
			v.Set(c)
		}
	case reflect.Struct:
		for _, f := range v.Fields() {
			if f.CanSet() {
				maskValue(f, vals, escaped)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if !v.CanSet() || v.Len() == 0 {
				return
			}
			raw := string(v.Bytes())
			masked := maskValues(raw, escaped)
			if masked == raw {
				return
			}
			if v.Type() == rawMessageType && !json.Valid([]byte(masked)) {
				masked = `"` + Hidden + `"`
			}
			v.SetBytes([]byte(masked))
			return
		}
		for i := range v.Len() {
			maskValue(v.Index(i), vals, escaped)
		}
	case reflect.Array:
		for i := range v.Len() {
			maskValue(v.Index(i), vals, escaped)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(v.MapIndex(k))
			maskValue(c, vals, escaped)
			v.SetMapIndex(k, c)
		}
	}
}

// Lookup returns a function that resolves secrets by name with ctx, in the
// shape tool.Context.Secrets takes. Failures read as not found.
func (m *Manager) Lookup(ctx context.Context) func(name string) (string, bool) {
	return func(name string) (string, bool) {
		v, err := m.resolve(ctx, name)
		return v, err == nil && v != ""
	}
}

// TerminalHooks returns the Env and Mask hooks of a terminal
// (tools/terminal Options): env exports the secrets a command mentions,
// mask hides every known value. Resolutions they make use ctx, which should
// live as long as the terminal.
func (m *Manager) TerminalHooks(ctx context.Context) (env func(command string) map[string]string, mask func(text string) string) {
	env = func(command string) map[string]string { return m.EnvFor(ctx, command) }
	mask = func(text string) string { return m.MaskContext(ctx, text) }
	return env, mask
}

// Registry returns the serialisable part of m for the conversation state:
// static and lookup secrets. Callbacks are left out (a function cannot be
// persisted), as is any other source whose type is not a registered kind;
// the caller must give them again after a reload.
func (m *Manager) Registry() Registry {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := Registry{Sources: make(map[string]Source, len(m.sources))}
	for name, src := range m.sources {
		if _, ok := event.KindOf(src); ok {
			r.Sources[name] = src
		}
	}
	return r
}

// MarshalJSON implements json.Marshaler: the Registry's JSON,
// {"secret_sources": {...}}, with values redacted.
func (m *Manager) MarshalJSON() ([]byte, error) { return json.Marshal(m.Registry()) }

// MapSecrets implements Holder on the serialisable part of m; the result is
// a Registry.
func (m *Manager) MapSecrets(f func(String) (String, error)) (any, error) {
	return m.Registry().MapSecrets(f)
}

var (
	_ Source = (*Callback)(nil)
	_ Holder = (*Manager)(nil)
)
