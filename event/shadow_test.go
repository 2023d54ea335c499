package event

import (
	"reflect"
	"testing"

	"github.com/gohands/gohands/internal/shadow"
)

// actionEventJSON and observationEventJSON declare their events' fields a
// second time, with the kinded value kept raw; this keeps them in step.
func TestEventShadowsInStep(t *testing.T) {
	for _, d := range shadow.Check(reflect.TypeFor[ActionEvent](), reflect.TypeFor[actionEventJSON](), "Action") {
		t.Error(d)
	}
	for _, d := range shadow.Check(reflect.TypeFor[ObservationEvent](), reflect.TypeFor[observationEventJSON](), "Observation") {
		t.Error(d)
	}
}
