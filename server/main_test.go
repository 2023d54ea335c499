package server

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
)

// TestMain fails the package when any test's request got an answer with
// a status its route does not document (see undocumented), naming each
// route and status once.
func TestMain(m *testing.M) {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	undocumented = func(rt *route, status int) {
		mu.Lock()
		defer mu.Unlock()
		seen[fmt.Sprintf("%s %s answered %d; /openapi.json lists %d, %v", rt.method, rt.path, status, rt.okStatus(), rt.errors)] = true
	}
	code := m.Run()
	if len(seen) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: routes answered with statuses their operations do not document:")
		for _, s := range slices.Sorted(maps.Keys(seen)) {
			fmt.Fprintln(os.Stderr, "\t"+s)
		}
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
