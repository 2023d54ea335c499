package secret

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestManagerMentioned(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.SetValue("GITHUB_TOKEN", "ghp_1")
	m.SetValue("API_KEY", "k")
	m.SetValue("TOKEN", "t")
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"echo $GITHUB_TOKEN", []string{"GITHUB_TOKEN", "TOKEN"}}, // substring, as the reference
		{"curl -H \"x: $api_key\"", []string{"API_KEY"}},          // any case
		{"ls -la", nil},
		{"echo ${Token}", []string{"TOKEN"}},
	} {
		if got := m.Mentioned(tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("Mentioned(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

var quiet = &ManagerOptions{Logger: slog.New(slog.DiscardHandler)}

func TestManagerEnvFor(t *testing.T) {
	m := NewManager(Registry{}, quiet)
	m.SetValue("A_KEY", "va")
	m.SetValue("B_KEY", "vb")
	m.SetValue("EMPTY", "")
	m.SetFunc("BROKEN", func(context.Context) (string, error) { return "", errors.New("vault down") })
	ctx := context.Background()
	got := m.EnvFor(ctx, "use $A_KEY and $EMPTY and $BROKEN")
	if want := map[string]string{"A_KEY": "va"}; !maps.Equal(got, want) {
		t.Errorf("EnvFor = %v, want %v (only mentioned, resolved, non-empty)", got, want)
	}
	if got := m.EnvFor(ctx, "true"); len(got) != 0 {
		t.Errorf("EnvFor of a command naming nothing = %v", got)
	}
}

func TestManagerEnvForResolvesCallbacksEachTime(t *testing.T) {
	var n atomic.Int32
	m := NewManager(Registry{}, nil)
	m.SetFunc("TOK", func(context.Context) (string, error) { return fmt.Sprintf("tok-%d", n.Add(1)), nil })
	ctx := context.Background()
	if v := m.EnvFor(ctx, "$TOK")["TOK"]; v != "tok-1" {
		t.Fatalf("first = %q", v)
	}
	if v := m.EnvFor(ctx, "$TOK")["TOK"]; v != "tok-2" {
		t.Fatalf("second = %q (late binding must call the function again)", v)
	}
	// Both values were handed to a shell: both stay masked.
	if got := m.Mask("tok-1 tok-2"); got != Hidden+" "+Hidden {
		t.Errorf("Mask = %q", got)
	}
}

func TestMaskOverlappingAndNested(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.SetValue("SHORT", "abc")
	m.SetValue("LONG", "abcdef")
	m.SetValue("OVER", "defgh")
	m.SetValue("EMPTY", "")
	for _, tc := range []struct{ in, want string }{
		{"x abcdef y", "x " + Hidden + " y"},      // nested: the longer value wins whole
		{"abcdefgh!", Hidden + "!"},               // overlapping: one span, nothing shows
		{"abc abc", Hidden + " " + Hidden},        // every occurrence
		{"aabcc", "a" + Hidden + "c"},             // inside a word
		{"nothing here", "nothing here"},          // the empty value masks nothing
		{"", ""},                                  // empty text
		{"abcabc", Hidden},                        // adjacent occurrences merge
		{"déjà abc vu", "déjà " + Hidden + " vu"}, // multi-byte text around
	} {
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaskKeepsReplacedValues(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.SetValue("K", "old-value")
	if got := m.Mask("old-value"); got != Hidden {
		t.Fatalf("Mask = %q", got)
	}
	m.SetValue("K", "new-value")
	if got := m.Mask("old-value new-value"); got != Hidden+" "+Hidden {
		t.Errorf("after update, Mask = %q; both values must stay hidden", got)
	}
}

// lookupServer serves the secret at /secret to requests with the right
// bearer token, failing while fail is set, and counts requests.
func lookupServer(t *testing.T) (srv *httptest.Server, hits *atomic.Int32, fail *atomic.Bool) {
	hits, fail = new(atomic.Int32), new(atomic.Bool)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if fail.Load() {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Authorization") != "Bearer hdr-token" || r.Header.Get("X-Team") != "blue" {
			http.Error(w, "bad headers", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "looked-up-value")
	}))
	t.Cleanup(srv.Close)
	return srv, hits, fail
}

func TestLookupSecretHeadersAndRelativeURL(t *testing.T) {
	srv, hits, _ := lookupServer(t)
	t.Setenv(InternalServerURLEnv, srv.URL)
	var r Registry
	// A registry as the reference persists it, with a relative URL.
	in := `{"secret_sources":{"DB_PASS":{"url":"/secret","headers":{"Authorization":"Bearer hdr-token","X-Team":"blue"},"kind":"LookupSecret"}}}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	m := NewManager(r, nil)
	env := m.EnvFor(context.Background(), "psql -p $DB_PASS")
	if env["DB_PASS"] != "looked-up-value" {
		t.Fatalf("EnvFor = %v", env)
	}
	if got := m.Mask("pw=looked-up-value"); got != "pw="+Hidden {
		t.Errorf("Mask = %q", got)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests; a resolved value must be reused for masking", hits.Load())
	}
}

func TestLookupFailureRetriedAfterBackoff(t *testing.T) {
	srv, hits, fail := lookupServer(t)
	fail.Store(true)
	now := time.Unix(1000, 0)
	var clock sync.Mutex
	m := NewManager(Registry{}, &ManagerOptions{Logger: quiet.Logger, Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }})
	m.Set("DB_PASS", &LookupSecret{URL: srv.URL + "/secret", Headers: map[string]String{
		"Authorization": New("Bearer hdr-token"), "X-Team": New("blue"),
	}})
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }

	if got := m.Mask("looked-up-value"); got != "looked-up-value" {
		t.Fatalf("Mask with a failing lookup = %q", got)
	}
	if hits.Load() != 1 {
		t.Fatalf("hits = %d after the first mask", hits.Load())
	}
	fail.Store(false)
	advance(FailedLookupRetry - time.Second)
	m.Mask("x")
	if hits.Load() != 1 {
		t.Fatalf("hits = %d: a failed lookup was retried within %v", hits.Load(), FailedLookupRetry)
	}
	advance(2 * time.Second)
	if got := m.Mask("looked-up-value"); got != Hidden {
		t.Fatalf("Mask after the back-off = %q", got)
	}
	if hits.Load() != 2 {
		t.Fatalf("hits = %d, want 2", hits.Load())
	}
	// A command naming the secret does not wait for the back-off.
	fail.Store(true)
	if env := m.EnvFor(context.Background(), "$db_pass"); len(env) != 0 {
		t.Errorf("EnvFor with a failing lookup = %v", env)
	}
	if hits.Load() != 3 {
		t.Errorf("hits = %d, want 3", hits.Load())
	}
	// The value already known stays masked even though the source failed.
	if got := m.Mask("looked-up-value"); got != Hidden {
		t.Errorf("Mask = %q", got)
	}
}

func TestConcurrentMasksShareOneLookup(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(100 * time.Millisecond)
		fmt.Fprint(w, "slow-secret")
	}))
	defer srv.Close()
	m := NewManager(Registry{}, nil)
	m.Set("SLOW", &LookupSecret{URL: srv.URL})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := m.Mask("x slow-secret"); got != "x "+Hidden {
				t.Errorf("Mask = %q", got)
			}
		})
	}
	wg.Wait()
	if hits.Load() != 1 {
		t.Errorf("%d lookups for 8 concurrent masks", hits.Load())
	}
}

func TestEmptyLookupBacksOff(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	m := NewManager(Registry{}, quiet)
	m.Set("EMPTY", &LookupSecret{URL: srv.URL})
	for range 5 {
		m.Mask("some output")
	}
	if hits.Load() != 1 {
		t.Errorf("%d lookups for 5 masks of a secret that resolves empty", hits.Load())
	}
}

func TestManagerUpdateWhileInUse(t *testing.T) {
	m := NewManager(Registry{}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("S%d_%d", g, i%8)
				if err := m.SetValue(name, fmt.Sprintf("value-%d-%d", g, i%8)); err != nil {
					t.Error(err)
					return
				}
				m.SetFunc("CB", func(context.Context) (string, error) { return "callback-value", nil })
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				env := m.EnvFor(ctx, "echo $S0_1 $S1_2 $CB")
				for k, v := range env {
					if got := m.Mask("[" + v + "]"); got != "["+Hidden+"]" {
						t.Errorf("%s: Mask(%q) = %q", k, v, got)
						return
					}
				}
				m.Infos()
				m.Registry()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	for _, name := range m.Names() {
		v, err := m.Value(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Mask("<" + v + ">"); got != "<"+Hidden+">" {
			t.Errorf("final Mask of %s = %q", name, got)
		}
	}
}

func TestManagerRegistryRedactsAndOmitsCallbacks(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.Set("STATIC", &StaticSecret{Description: "a static one", Value: New("plain-static")})
	m.Set("LOOK", &LookupSecret{URL: "http://vault/x", Headers: map[string]String{"Authorization": New("Bearer hdr")}})
	m.SetFunc("CB", func(context.Context) (string, error) { return "cb", nil })

	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"secret_sources":{"LOOK":{"url":"http://vault/x","headers":{"Authorization":"**********"},"kind":"LookupSecret"},"STATIC":{"description":"a static one","value":"**********","kind":"StaticSecret"}}}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	if strings.Contains(string(b), "plain-static") || strings.Contains(string(b), "Bearer hdr") {
		t.Fatal("a secret leaked into the JSON")
	}

	// With a cipher, values survive a round trip; the callback does not.
	c := NewCipher("state key")
	enc, err := m.MapSecrets(c.Encrypt)
	if err != nil {
		t.Fatal(err)
	}
	b, err = json.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "plain-static") {
		t.Fatalf("plaintext in encrypted JSON: %s", b)
	}
	var back Registry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	dec, err := back.MapSecrets(c.Decrypt)
	if err != nil {
		t.Fatal(err)
	}
	m2 := NewManager(dec.(Registry), nil)
	if got := m2.Names(); !slices.Equal(got, []string{"LOOK", "STATIC"}) {
		t.Errorf("names after reload = %v", got)
	}
	if v, err := m2.Value(context.Background(), "STATIC"); err != nil || v != "plain-static" {
		t.Errorf("STATIC after reload = %q, %v", v, err)
	}
	if _, err := m2.Value(context.Background(), "CB"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CB after reload: err = %v, want ErrNotFound", err)
	}
}

func TestManagerInfosAndErrors(t *testing.T) {
	m := NewManager(Registry{Sources: map[string]Source{"B": &StaticSecret{Value: New("b")}}}, nil)
	m.Set("A", &Callback{Description: "from the keychain", Func: func(context.Context) (string, error) { return "a", nil }})
	want := []Info{{"A", "from the keychain"}, {"B", ""}}
	if got := m.Infos(); !slices.Equal(got, want) {
		t.Errorf("Infos = %v, want %v", got, want)
	}
	if err := m.Set("X", nil); err == nil {
		t.Error("nil source accepted")
	}
	if err := m.SetValue("", "v"); err == nil {
		t.Error("empty name accepted")
	}
	if err := m.SetFunc("F", nil); err == nil {
		t.Error("nil function accepted")
	}
	if got := m.Names(); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("a failed update changed the names: %v", got)
	}
}

func TestTerminalHooksAndLookup(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.SetValue("PW", "hunter2")
	env, mask := m.TerminalHooks(context.Background())
	if got := env("echo $PW"); got["PW"] != "hunter2" || len(got) != 1 {
		t.Errorf("env = %v", got)
	}
	if got := mask("the password is hunter2"); got != "the password is "+Hidden {
		t.Errorf("mask = %q", got)
	}
	look := m.Lookup(context.Background())
	if v, ok := look("PW"); !ok || v != "hunter2" {
		t.Errorf("lookup PW = %q, %v", v, ok)
	}
	if _, ok := look("NOPE"); ok {
		t.Error("lookup of a missing secret succeeded")
	}
}

func ExampleManager() {
	m := NewManager(Registry{}, nil)
	m.SetValue("GITHUB_TOKEN", "ghp_example")
	m.SetFunc("SESSION", func(context.Context) (string, error) { return "fresh-session", nil })

	// The terminal exports only what a command mentions...
	fmt.Println(m.EnvFor(context.Background(), "git push https://x:$GITHUB_TOKEN@host/repo"))
	// ...and every known value is hidden in what comes back.
	fmt.Println(m.Mask("remote: https://x:ghp_example@host/repo"))
	// Output:
	// map[GITHUB_TOKEN:ghp_example]
	// remote: https://x:<secret-hidden>@host/repo
}

// TestPartialEnds: the bytes at the end of a text that may begin a value,
// and at its start that may end one, never a whole value.
func TestPartialEnds(t *testing.T) {
	m := NewManager(Registry{}, nil)
	m.Hide("sk-ABCDEF", "Kq9-xyz1")
	for _, c := range []struct {
		text           string
		suffix, prefix int
	}{
		{"", 0, 0},
		{"plain text", 0, 0},
		{"out sk-AB", 5, 0},
		{"out Kq9", 3, 0},
		{"out sk-ABCDEF", 0, 0}, // whole: Mask's
		{"CDEF more", 0, 4},
		{"F", 0, 1},
		{"yz1 and sk-", 3, 3},
		{"sk-ABCDEF rest", 0, 0},
	} {
		if got := m.PartialSuffix(c.text); got != c.suffix {
			t.Errorf("PartialSuffix(%q) = %d, want %d", c.text, got, c.suffix)
		}
		if got := m.PartialPrefix(c.text); got != c.prefix {
			t.Errorf("PartialPrefix(%q) = %d, want %d", c.text, got, c.prefix)
		}
	}
}
