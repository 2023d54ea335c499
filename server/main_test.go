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
		seen = map[string]string{}
	)
	undocumented = func(rt *route, status int, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		k := fmt.Sprintf("%s %s answered %d; /openapi.json lists %d, %v", rt.method, rt.path, status, rt.okStatus(), rt.errors)
		if _, ok := seen[k]; !ok {
			seen[k] = string(body) // the first such answer
		}
	}
	code := m.Run()
	if len(seen) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: routes answered with statuses their operations do not document:")
		for _, k := range slices.Sorted(maps.Keys(seen)) {
			fmt.Fprintf(os.Stderr, "\t%s: %s\n", k, seen[k])
		}
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
