package secret

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// lookupSecretJSON declares LookupSecret's fields a second time; this keeps them in step.
func TestLookupSecretShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[LookupSecret](), reflect.TypeFor[lookupSecretJSON]()) {
		t.Error(d)
	}
}
