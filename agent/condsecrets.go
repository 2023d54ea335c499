package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gohands/gohands/internal/wire"
	"github.com/gohands/gohands/secret"
)

// The condenser's configuration is kept as JSON, but the LLM it
// summarises with (its "llm", or those of a pipeline's "condensers") holds
// secrets like the agent's own LLM does. They are handled as the critic's
// api_key is: read out of the JSON into typed secrets, mapped by
// MapSecrets, and written back in their secret form, so that a condenser's
// key is redacted in responses and encrypted on disk, never copied there
// in clear.

// llmSecretKeys are the members of an LLM configuration that hold secrets
// (llm.Config's secret.String fields).
var llmSecretKeys = map[string]bool{
	"api_key":               true,
	"aws_access_key_id":     true,
	"aws_secret_access_key": true,
	"aws_session_token":     true,
}

// condenserSecrets returns the secret slots of the condenser's LLM
// configurations in document order: as MapSecrets left them, or as the
// configuration gives them (a null or redacted value is a zero secret).
func (a *Agent) condenserSecrets() ([]secret.String, error) {
	if a.condenserKeys != nil {
		return a.condenserKeys, nil
	}
	var ks []secret.String
	_, err := rewriteCondenserSecrets(a.Condenser, func(val []byte) ([]byte, error) {
		var s secret.String
		if err := json.Unmarshal(val, &s); err != nil {
			return nil, err
		}
		ks = append(ks, s)
		return val, nil
	})
	return ks, err
}

// condenserJSON returns the condenser configuration with each secret slot
// written by enc.
func (a *Agent) condenserJSON(enc func(secret.String) secret.String) (json.RawMessage, error) {
	ks, err := a.condenserSecrets()
	if err != nil || len(ks) == 0 {
		return a.Condenser, err
	}
	i := 0
	return rewriteCondenserSecrets(a.Condenser, func([]byte) ([]byte, error) {
		k := ks[i]
		i++
		if k.IsZero() {
			return []byte("null"), nil
		}
		return json.Marshal(enc(k))
	})
}

// rewriteCondenserSecrets returns raw with the value of every secret
// member of its LLM configurations replaced by what f returns for it.
// Other members are kept byte for byte, in order.
func rewriteCondenserSecrets(raw json.RawMessage, f func(val []byte) ([]byte, error)) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return raw, nil
	}
	out, err := rewriteMembers(t, func(key string, val []byte) ([]byte, error) {
		switch key {
		case "llm":
			if v := bytes.TrimSpace(val); len(v) > 0 && v[0] == '{' {
				return rewriteMembers(v, func(key string, val []byte) ([]byte, error) {
					if llmSecretKeys[key] {
						return f(val)
					}
					return val, nil
				})
			}
		case "condensers":
			var list []json.RawMessage
			if json.Unmarshal(val, &list) != nil {
				return val, nil // not a pipeline's list: the condenser decoder says so
			}
			var b bytes.Buffer
			b.WriteByte('[')
			for i, c := range list {
				if i > 0 {
					b.WriteByte(',')
				}
				nc, err := rewriteCondenserSecrets(c, f)
				if err != nil {
					return nil, err
				}
				b.Write(nc)
			}
			b.WriteByte(']')
			return b.Bytes(), nil
		}
		return val, nil
	})
	if err != nil {
		return nil, fmt.Errorf("agent: condenser: %w", err)
	}
	return out, nil
}

// rewriteMembers returns the JSON object obj with each member's value
// replaced by what f returns for it.
func rewriteMembers(obj []byte, f func(key string, val []byte) ([]byte, error)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	err := wire.ScanObject(obj, func(key, val []byte) error {
		nv, err := f(string(key), val)
		if err != nil {
			return err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(wire.AppendString(nil, string(key)))
		b.WriteByte(':')
		b.Write(nv)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
