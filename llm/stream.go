package llm

import (
	"context"
	"errors"
	"iter"

	"github.com/gohands/gohands/event"
)

// Chunk is one element of a Stream: a fragment of the reply, or, last, the
// complete Response.
type Chunk struct {
	Delta    Delta
	Response *Response // set on the final chunk only
}

var errStreamStopped = errors.New("llm: stream stopped by the consumer")

// Stream is the iterator form of a streaming completion on any Model: it
// yields each fragment as it arrives, then a final chunk with the complete
// response (the same message Completion returns). An error ends the
// stream. Stopping the loop early cancels the call.
func Stream(ctx context.Context, m Model, messages []event.Message, tools []ToolSpec, opts *CallOptions) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		var o CallOptions
		if opts != nil {
			o = *opts
		}
		o.NoStream = false
		stopped := false
		o.OnDelta = func(d Delta) error {
			if stopped || !yield(Chunk{Delta: d}, nil) {
				stopped = true
				return errStreamStopped
			}
			return nil
		}
		resp, err := m.Completion(ctx, messages, tools, &o)
		switch {
		case stopped:
		case err != nil:
			yield(Chunk{}, err)
		default:
			yield(Chunk{Response: resp}, nil)
		}
	}
}
