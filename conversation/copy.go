package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Copy copies a conversation — its base state and every event, in order —
// from src into dst, which must be empty: to move a conversation between
// stores (a file store and a shared database, say).
func Copy(dst, src Store) error {
	if dst.Len() > 0 {
		return fmt.Errorf("conversation: copy: the destination already holds %d events", dst.Len())
	}
	base, err := src.ReadBase()
	if err != nil {
		return fmt.Errorf("conversation: copy: %w", err)
	}
	for i := range src.Len() {
		e, err := src.Event(i)
		if err != nil {
			return fmt.Errorf("conversation: copy: event %d: %w", i, err)
		}
		if _, err := dst.Append(e); err != nil {
			return fmt.Errorf("conversation: copy: event %d: %w", i, err)
		}
	}
	if base != nil {
		if err := dst.WriteBase(base); err != nil {
			return fmt.Errorf("conversation: copy: %w", err)
		}
	}
	return nil
}

// StoredID returns the conversation id recorded in a store's base state.
func StoredID(s Store) (string, error) {
	base, err := s.ReadBase()
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
