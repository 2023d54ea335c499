package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/gohands/gohands/llm"
)

// retryFlags bound the retries of failed model calls (a 429, a 5xx, a
// timeout): by default five attempts with waits of 8 to 64 s, about two
// minutes before an error shows.
type retryFlags struct {
	attempts int           // 0: the configuration's
	maxWait  time.Duration // 0: the configuration's
}

// addRetryFlags adds --retries and --retry-max-wait to fl.
func addRetryFlags(fl *pflag.FlagSet, r *retryFlags) {
	fl.IntVar(&r.attempts, "retries", 0, "attempts of each model call that fails with a rate limit, a server error or a timeout, the first included; 1 never retries (default: the settings' num_retries, else 5)")
	fl.DurationVar(&r.maxWait, "retry-max-wait", 0, "longest wait before a retry, a provider's Retry-After included (default: the settings' retry_max_wait seconds, else 64s)")
}

// applyRetries sets cfg's retry bounds: the flags, else the settings
// file's num_retries and retry_max_wait, else what cfg holds (an
// --llm-config file's, or the defaults). The shortest wait follows a
// lower maximum.
func applyRetries(cfg *llm.Config, r retryFlags, st settings) error {
	if r.attempts < 0 {
		return usageErr("--retries %d: want 1 or more", r.attempts)
	}
	if r.maxWait < 0 {
		return usageErr("--retry-max-wait %s: want a positive duration", r.maxWait)
	}
	if st.NumRetries != nil {
		cfg.NumRetries = *st.NumRetries
	}
	if st.RetryMaxWait != nil {
		cfg.RetryMaxWait = *st.RetryMaxWait
	}
	if r.attempts > 0 {
		cfg.NumRetries = r.attempts
	}
	if r.maxWait > 0 {
		cfg.RetryMaxWait = r.maxWait.Seconds()
	}
	if cfg.NumRetries < 0 || cfg.RetryMaxWait < 0 {
		return usageErr("num_retries %d, retry_max_wait %g: want numbers of 0 or more", cfg.NumRetries, cfg.RetryMaxWait)
	}
	cfg.RetryMinWait = min(cfg.RetryMinWait, cfg.RetryMaxWait)
	return nil
}

// printRetry is the line a retry shows on standard error.
func printRetry(w io.Writer, attempt, of int, wait time.Duration, err error) {
	fmt.Fprintf(w, "gohands: model call failed (attempt %d of %d), retrying in %s: %v\n",
		attempt, of, wait.Round(time.Millisecond), err)
}
