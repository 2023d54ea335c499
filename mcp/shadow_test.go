package mcp

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// serverJSON declares Server's fields a second time; this keeps them in step.
func TestServerShadowInStep(t *testing.T) {
	t.Parallel()
	for _, d := range shadow.Check(reflect.TypeFor[Server](), reflect.TypeFor[serverJSON](),
		"Disabled", "Enabled", // the wire's enabled is !Disabled
		"Timeout", "SSEReadTimeout", // durations are seconds on the wire
	) {
		t.Error(d)
	}
}
