package userstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gohands/gohands/secret"
)

// ConnectionsSchemaVersion is the version of provider_connections.json
// this package writes; a newer file is refused.
const ConnectionsSchemaVersion = 1

// ErrNoConnection is an id no stored provider connection has.
var ErrNoConnection = errors.New("userstore: no such provider connection")

// ErrConnectionLimit is a create beyond the store's limit.
var ErrConnectionLimit = errors.New("userstore: provider connection limit reached")

// Connection is a shared LLM credential (a key and an address) that LLM
// profiles name by ID.
type Connection struct {
	ID          string  `json:"id"`
	DisplayName string  `json:"display_name"`
	Provider    string  `json:"provider"`
	APIKey      *string `json:"api_key"`
	BaseURL     *string `json:"base_url"`
	CreatedAt   int64   `json:"created_at"`
	UpdatedAt   int64   `json:"updated_at"`
}

// Connections is the store of provider-connections/provider_connections.json,
// the reference's layout; keys are sealed with the cipher when there is one.
type Connections struct {
	f file
	c *secret.Cipher
}

// OpenConnections returns the store under dir (the persistence directory).
func OpenConnections(dir string, c *secret.Cipher) *Connections {
	return &Connections{f: file{dir: dir + "/provider-connections", name: "provider_connections.json"}, c: c}
}

type connectionsFile struct {
	SchemaVersion int          `json:"schema_version"`
	Connections   []Connection `json:"connections"`
}

// read decodes the file, keys opened; a missing file is empty.
func (s *Connections) read() (*connectionsFile, error) {
	b, err := s.f.read()
	if err != nil {
		return nil, err
	}
	out := &connectionsFile{SchemaVersion: ConnectionsSchemaVersion, Connections: []Connection{}}
	if b == nil {
		return out, nil
	}
	if err := json.Unmarshal(b, out); err != nil || out.SchemaVersion > ConnectionsSchemaVersion {
		return nil, ErrUnreadable
	}
	for i, c := range out.Connections {
		if c.APIKey == nil {
			continue
		}
		k := *c.APIKey
		if s.c != nil && strings.HasPrefix(k, "gAAAA") {
			if k, err = s.c.DecryptString(k); err != nil {
				return nil, fmt.Errorf("%w: connection %s", ErrUnreadable, c.ID)
			}
		}
		if strings.TrimSpace(k) == "" || k == Redacted {
			out.Connections[i].APIKey = nil
			continue
		}
		out.Connections[i].APIKey = &k
	}
	out.SchemaVersion = ConnectionsSchemaVersion
	return out, nil
}

func (s *Connections) write(cf *connectionsFile) error {
	sealed := *cf
	sealed.Connections = make([]Connection, len(cf.Connections))
	for i, c := range cf.Connections {
		if c.APIKey != nil && s.c != nil {
			t, err := s.c.EncryptString(*c.APIKey)
			if err != nil {
				return err
			}
			c.APIKey = &t
		}
		sealed.Connections[i] = c
	}
	return s.f.write(&sealed)
}

// List returns the stored connections, keys in clear.
func (s *Connections) List() ([]Connection, error) {
	var out []Connection
	err := s.f.locked(func() error {
		cf, err := s.read()
		if err == nil {
			out = cf.Connections
		}
		return err
	})
	return out, err
}

// Get returns the connection id, or ErrNoConnection.
func (s *Connections) Get(id string) (Connection, error) {
	list, err := s.List()
	if err != nil {
		return Connection{}, err
	}
	for _, c := range list {
		if c.ID == id {
			return c, nil
		}
	}
	return Connection{}, ErrNoConnection
}

// Create adds c unless the store holds max already.
func (s *Connections) Create(c Connection, max int) error {
	return s.f.locked(func() error {
		cf, err := s.read()
		if err != nil {
			return err
		}
		if len(cf.Connections) >= max {
			return ErrConnectionLimit
		}
		cf.Connections = append(cf.Connections, c)
		return s.write(cf)
	})
}

// Update changes the stored connection of c's ID with fn, under the lock.
func (s *Connections) Update(id string, fn func(*Connection)) (Connection, error) {
	var out Connection
	err := s.f.locked(func() error {
		cf, err := s.read()
		if err != nil {
			return err
		}
		for i := range cf.Connections {
			if cf.Connections[i].ID == id {
				fn(&cf.Connections[i])
				out = cf.Connections[i]
				return s.write(cf)
			}
		}
		return ErrNoConnection
	})
	return out, err
}

// Delete removes the connection id when ok(it) allows.
func (s *Connections) Delete(id string, ok func(Connection) error) (Connection, error) {
	var out Connection
	err := s.f.locked(func() error {
		cf, err := s.read()
		if err != nil {
			return err
		}
		for i, c := range cf.Connections {
			if c.ID == id {
				if err := ok(c); err != nil {
					return err
				}
				out = c
				cf.Connections = append(cf.Connections[:i], cf.Connections[i+1:]...)
				return s.write(cf)
			}
		}
		return ErrNoConnection
	})
	return out, err
}
