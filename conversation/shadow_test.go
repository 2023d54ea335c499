package conversation

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

func TestFieldsShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[Fields](), reflect.TypeFor[fieldsJSON]()) {
		t.Error(d)
	}
}
