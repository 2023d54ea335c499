package task

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// actionJSON declares Action's fields a second time; this keeps them in step.
func TestActionShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[Action](), reflect.TypeFor[actionJSON](),
		"MaxTurns", "Kind", // json:"-" on Action: written by the shadow only
	) {
		t.Error(d)
	}
}
