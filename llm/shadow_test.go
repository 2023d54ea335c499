package llm

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// configJSON declares Config's fields a second time; this keeps the two
// in step until the codec can write an empty value as null by itself.
func TestConfigShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[Config](), reflect.TypeFor[configJSON](),
		"IsSubscription", // written from the unexported subscription flag
	) {
		t.Error(d)
	}
}
