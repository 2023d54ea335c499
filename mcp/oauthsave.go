package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/secret"
)

// WithOAuthState returns the JSON of one server's configuration with its
// auth "state" replaced by st, whose secrets are written as reveal maps
// them (exposed in clear for a settings file, encrypted with a server's
// key for a stored mcp_config). The entry's other members are kept as
// they are. A configuration's entry with no auth object fails.
func WithOAuthState(spec json.RawMessage, st *OAuthState, reveal func(secret.String) (secret.String, error)) (json.RawMessage, error) {
	mapped, err := st.mapSecrets(reveal)
	if err != nil {
		return nil, fmt.Errorf("OAuth state: %w", err)
	}
	state, err := json.Marshal(mapped)
	if err != nil {
		return nil, err
	}
	var server map[string]json.RawMessage
	if err := json.Unmarshal(spec, &server); err != nil {
		return nil, err
	}
	var auth map[string]json.RawMessage
	if err := json.Unmarshal(server["auth"], &auth); err != nil || auth == nil {
		return nil, errors.New("auth: not an object")
	}
	auth["state"] = state
	if server["auth"], err = json.Marshal(auth); err != nil {
		return nil, err
	}
	return json.Marshal(server)
}
