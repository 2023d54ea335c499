package conversation_test

import (
	"github.com/gohands/gohands/conversation/internal/convtest"
	"testing"

	"github.com/gohands/gohands/event"
)

func TestRealisticMixShape(t *testing.T) {
	evs := convtest.RealisticEvents(82)
	total, obs, nobs := 0, 0, 0
	for _, e := range evs {
		b, err := event.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		if _, ok := e.(*event.ObservationEvent); ok {
			obs += len(b)
			nobs++
		}
	}
	t.Logf("82 events: %d KB; observations %d%% of events, %d%% of bytes", total/1000, nobs*100/82, obs*100/total)
	// The reference's median conversation: 82 events, 380 KB, observations
	// 48% of events and 78% of bytes.
	if total < 330_000 || total > 430_000 || obs*100/total < 70 || obs*100/total > 85 || nobs*100/82 < 44 || nobs*100/82 > 52 {
		t.Errorf("mix is not realistic: %d bytes, %d observations with %d bytes", total, nobs, obs)
	}
}
