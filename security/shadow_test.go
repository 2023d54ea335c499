package security

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// ensembleJSON declares Ensemble's fields a second time; this keeps them in step.
func TestEnsembleShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[Ensemble](), reflect.TypeFor[ensembleJSON]()) {
		t.Error(d)
	}
}
