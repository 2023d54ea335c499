package tool

import "context"

type outputKey struct{}

// WithOutput returns a context under which tools that produce output over
// time (the terminal) pass it to fn as it arrives, before their
// observation is complete, so that a person can watch a command run. fn
// may be called from any goroutine, never concurrently for one action;
// the text is raw (it may hold terminal escape sequences).
func WithOutput(ctx context.Context, fn func(text string)) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// Output returns the function WithOutput set on ctx, or nil.
func Output(ctx context.Context) func(text string) {
	fn, _ := ctx.Value(outputKey{}).(func(string))
	return fn
}
