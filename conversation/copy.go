package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Copy copies a conversation — its base state and every event, in order —
// from the log src into dst, a store just opened, which must be empty: to
// move a conversation between stores (a file store and a shared database,
// say).
func Copy(ctx context.Context, dst Store, src *Log) error {
	to, err := LoadLog(ctx, dst)
	if err != nil {
		return fmt.Errorf("conversation: copy: %w", err)
	}
	if to.Len() > 0 {
		return fmt.Errorf("conversation: copy: the destination already holds %d events", to.Len())
	}
	base, err := src.Store().ReadBase(ctx)
	if err != nil {
		return fmt.Errorf("conversation: copy: %w", err)
	}
	for i := range src.Len() {
		e, err := src.Event(ctx, i)
		if err != nil {
			return fmt.Errorf("conversation: copy: event %d: %w", i, err)
		}
		if _, err := to.Append(ctx, e); err != nil {
			return fmt.Errorf("conversation: copy: event %d: %w", i, err)
		}
	}
	if base != nil {
		if err := dst.WriteBase(ctx, base); err != nil {
			return fmt.Errorf("conversation: copy: %w", err)
		}
	}
	return nil
}

// StoredID returns the conversation id recorded in a store's base state.
func StoredID(ctx context.Context, s Store) (string, error) {
	base, err := s.ReadBase(ctx)
	if err != nil {
		return "", err
	}
	if base == nil {
		return "", ErrNoState
	}
	var f struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(base, &f); err != nil {
		return "", fmt.Errorf("conversation: base state: %w", err)
	}
	if f.ID == "" {
		return "", errors.New("conversation: base state without an id")
	}
	return f.ID, nil
}
