package oteltrace

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gohands/gohands/telemetry"
)

// sampler decides whether a trace is recorded, as OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG say: always_on, always_off, traceidratio, and
// their parentbased_ forms, which follow a remote parent's sampled flag
// (parentbased_always_on, the specification's default, when unset). The
// decision is taken at a trace's first span in the process; its other
// spans follow it.
type sampler struct {
	parentBased bool
	// ratio is the share of traces recorded: 1 always, 0 never.
	ratio float64
}

func samplerFromEnv() (sampler, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")))
	s := sampler{ratio: 1}
	s.parentBased = name == "" || strings.HasPrefix(name, "parentbased_")
	switch strings.TrimPrefix(name, "parentbased_") {
	case "", "always_on":
	case "always_off":
		s.ratio = 0
	case "traceidratio":
		if arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				return s, fmt.Errorf("oteltrace: OTEL_TRACES_SAMPLER_ARG %q is not a ratio between 0 and 1", arg)
			}
			s.ratio = r
		}
	default:
		return s, fmt.Errorf("oteltrace: OTEL_TRACES_SAMPLER %q not supported (always_on, always_off, traceidratio, or parentbased_ one of them)", name)
	}
	return s, nil
}

// sample decides for a trace's first span in the process: tid is its
// trace id, rp its remote parent if remote.
func (s sampler) sample(tid *[16]byte, rp telemetry.SpanContext, remote bool) bool {
	switch {
	case remote && s.parentBased:
		return rp.Sampled
	case s.ratio >= 1:
		return true
	case s.ratio <= 0:
		return false
	}
	// The specification's TraceIdRatioBased: the trace id's last 8 bytes,
	// shifted to 63 bits, against the ratio of 2⁶³, so that every
	// process of a trace decides alike.
	return binary.BigEndian.Uint64(tid[8:])>>1 < uint64(s.ratio*(1<<63))
}
