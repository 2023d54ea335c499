package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/skill"
)

// hangingServer is a loopback server that accepts connections and never
// answers; it counts the connections it accepted.
func hangingServer(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), accepted
}

// A registration that auto-loads nothing (auto_load absent, false or an
// empty list) is not fetched by LoadRegistered: a hanging one costs
// nothing and is never contacted, while an auto-loading one beside it
// still loads.
func TestLoadRegisteredSkipsLazyMarketplaces(t *testing.T) {
	testenv.Program(t, "git")
	addr, accepted := hangingServer(t)
	mk := t.TempDir()
	write(t, mk, map[string]string{
		".plugin/marketplace.json": `{"name": "company", "owner": {"name": "Tools"}, "skills": [{"name": "greet", "source": "./skills/greet"}]}`,
		"skills/greet/SKILL.md":    "---\ndescription: greets\n---\nGreet.",
	})
	far := "http://user:pw@" + addr + "/market.git"
	regs := []Registration{
		{Name: "absent", Source: far},
		{Name: "off", Source: far, AutoLoad: json.RawMessage(`false`)},
		{Name: "none", Source: far, AutoLoad: json.RawMessage(`[]`)},
		{Name: "company", Source: mk, AutoLoad: json.RawMessage(`true`)},
	}
	type result struct {
		set   *Set
		warns []skill.Warning
	}
	got := make(chan result, 1)
	go func() {
		set, warns := LoadRegistered(context.Background(), regs, &FetchOptions{CacheDir: t.TempDir(), Timeout: 10 * time.Minute})
		got <- result{set, warns}
	}()
	var r result
	select {
	case r = <-got:
	case <-time.After(time.Minute): // hang guard only
		t.Fatal("LoadRegistered fetched a marketplace that auto-loads nothing")
	}
	if len(r.warns) != 0 || len(r.set.Skills) != 1 || r.set.Skills[0].Name != "greet" {
		t.Errorf("skills %v, warnings %v; want greet alone", r.set.Skills, r.warns)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the hanging marketplace was contacted %d times", n)
	}
}

// When no registered marketplace can be fetched, ResolveRef's not-found
// error says why for each, naming its URL without the password.
func TestResolveRefAllUnreachable(t *testing.T) {
	testenv.Program(t, "git")
	var regs []Registration
	var shown []string
	for _, name := range []string{"a", "b"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		regs = append(regs, Registration{Name: name, Source: "http://user:hunter2@" + addr + "/m.git"})
		shown = append(shown, "http://****@"+addr+"/m.git")
	}
	_, err := ResolveRef(context.Background(), regs, "tools", &FetchOptions{CacheDir: t.TempDir(), Timeout: time.Minute})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("ResolveRef = %v, want ErrNotFound", err)
	}
	msg := err.Error()
	for _, want := range []string{"no marketplace could be fetched", "marketplace a: ", "marketplace b: ", shown[0], shown[1]} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("password in %q", msg)
	}
}

// A marketplace whose remote is gone loads from the copy the last fetch
// left in the cache, with a warning naming it; Fetch without Stale still
// fails.
func TestLoadRegisteredUsesLastCopy(t *testing.T) {
	testenv.Program(t, "git")
	repo := filepath.Join(t.TempDir(), "market")
	write(t, repo, map[string]string{"skills/greet/SKILL.md": "---\ndescription: greets\n---\nGreet."})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	opts := &FetchOptions{CacheDir: t.TempDir(), Timeout: time.Minute}
	regs := []Registration{{Name: "company", Source: "file://" + repo, AutoLoad: json.RawMessage(`true`)}}
	load := func() ([]string, []skill.Warning) {
		set, warns := LoadRegistered(context.Background(), regs, opts)
		var names []string
		for _, s := range set.Skills {
			names = append(names, s.Name)
		}
		return names, warns
	}
	if names, warns := load(); !slices.Equal(names, []string{"greet"}) || len(warns) != 0 {
		t.Fatalf("first load: %v %v", names, warns)
	}
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	names, warns := load()
	if !slices.Equal(names, []string{"greet"}) || len(warns) != 1 || !strings.Contains(warns[0].Err.Error(), "using the copy fetched before") || !strings.Contains(warns[0].Err.Error(), repo) {
		t.Errorf("remote gone: %v %v", names, warns)
	}
	if _, _, err := Fetch(context.Background(), Source{Source: "file://" + repo}, &FetchOptions{CacheDir: opts.CacheDir}); err == nil {
		t.Error("Fetch without Stale used the old copy")
	}
}
