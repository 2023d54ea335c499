package mcp

import (
	"encoding/json"
	"strings"

	"github.com/gohands/gohands/secret"
)

// OAuthWriteBack is the body the reference's agent server POSTs to
// {webhook base_url}/mcp-oauth-state when an MCP server given inline in a
// conversation's agent (not one of its own settings) refreshes its OAuth
// tokens, so that the app server that started the conversation keeps
// them: the next conversation then starts from the rotated refresh
// token, not one the authorization server has revoked.
type OAuthWriteBack struct {
	// ServerURL is the server's URL without a trailing slash.
	ServerURL string `json:"server_url"`
	// OAuthState is the new state, its secrets in clear.
	OAuthState *OAuthState `json:"oauth_state"`
}

// NewOAuthWriteBack returns the write-back of st, the new state of s,
// and whether it is to be written back. As in the reference, only a
// state with an access token, issued to the client s started with (its
// authentication's client_id, else the client of its stored state), is:
// dropped credentials, or a client registered during the conversation,
// never replace what the app server holds.
func NewOAuthWriteBack(s Server, st *OAuthState) (*OAuthWriteBack, bool) {
	if s.URL == "" || s.Auth == nil || s.Auth.Strategy != AuthOAuth2 || st == nil ||
		st.Tokens == nil || st.Tokens.AccessToken.IsZero() {
		return nil, false
	}
	var started string
	if s.Auth.OAuth != nil {
		started = s.Auth.OAuth.ClientID
	}
	if started == "" && s.Auth.State != nil && s.Auth.State.ClientInfo != nil {
		started = s.Auth.State.ClientInfo.ClientID
	}
	var now string
	if st.ClientInfo != nil {
		now = st.ClientInfo.ClientID
	}
	if now != started {
		return nil, false
	}
	return &OAuthWriteBack{ServerURL: strings.TrimRight(s.URL, "/"), OAuthState: st}, true
}

// MarshalJSON writes the state's secrets in clear, as the app server
// stores them.
func (w *OAuthWriteBack) MarshalJSON() ([]byte, error) {
	st, err := w.OAuthState.mapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
	if err != nil {
		return nil, err
	}
	type plain OAuthWriteBack
	return json.Marshal(&plain{ServerURL: w.ServerURL, OAuthState: st})
}
