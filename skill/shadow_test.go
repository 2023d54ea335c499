package skill

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// skillJSON declares Skill's fields a second time; this keeps them in step.
func TestSkillShadowInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[Skill](), reflect.TypeFor[skillJSON]()) {
		t.Error(d)
	}
}
