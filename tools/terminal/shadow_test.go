package terminal

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// metadataJSON declares Metadata's fields a second time; this keeps them in step.
func TestMetadataShadowInStep(t *testing.T) {
	t.Parallel()
	for _, d := range shadow.Check(reflect.TypeFor[Metadata](), reflect.TypeFor[metadataJSON]()) {
		t.Error(d)
	}
}
