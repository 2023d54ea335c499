package conversation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/wire"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
)

// Defaults of the reference's ConversationState.
const (
	DefaultMaxIterations  = 500
	DefaultPersistenceDir = "workspace/conversations"
)

// Fields are the persisted fields of a conversation's state, written as
// base_state.json in the reference's field order. Values published by a
// State are read-only snapshots: change them through State.Update.
//
// The kind-tagged slots (Agent, Workspace, ConfirmationPolicy,
// SecurityAnalyzer) hold pointers to types registered with
// event.RegisterKind; a slot value that implements secret.Holder has its
// secrets encrypted on disk when the State has a cipher, and redacted
// otherwise.
type Fields struct {
	// ID is the conversation id, a dashed UUID.
	ID string `json:"id"`
	// Agent is the agent running the conversation (kind "Agent" or
	// "ACPAgent"). Required.
	Agent any `json:"agent,omitempty" wire:"kinded"`
	// Workspace is where the agent works, e.g. *workspace.Local.
	// Required.
	Workspace any `json:"workspace,omitempty" wire:"kinded"`
	// PersistenceDir is the conversation directory; "" encodes as null.
	PersistenceDir  string          `json:"persistence_dir,omitempty"`
	MaxIterations   int             `json:"max_iterations"`
	StuckDetection  bool            `json:"stuck_detection"`
	ExecutionStatus ExecutionStatus `json:"execution_status"`
	// ConfirmationPolicy is nil for the default, NeverConfirm.
	ConfirmationPolicy security.ConfirmationPolicy `json:"confirmation_policy" wire:"kinded"`
	// SecurityAnalyzer is nil for none.
	SecurityAnalyzer         security.Analyzer `json:"security_analyzer,omitempty" wire:"kinded"`
	ActivatedKnowledgeSkills []string          `json:"activated_knowledge_skills" wire:"emitempty"`
	ActivatedPathRules       []string          `json:"activated_path_rules" wire:"emitempty"`
	InvokedSkills            []string          `json:"invoked_skills" wire:"emitempty"`
	// BlockedActions maps action ids to the reason a hook blocked them.
	BlockedActions map[string]string `json:"blocked_actions" wire:"emitempty"`
	// BlockedMessages maps message ids to the reason a hook blocked them.
	BlockedMessages   map[string]string `json:"blocked_messages" wire:"emitempty"`
	LastUserMessageID string            `json:"last_user_message_id,omitempty"`
	// LeafEventID is the HEAD of the event tree: the parent of the next
	// appended event. "" means an empty tree, or a legacy linear log when
	// HeadIsEmpty is false.
	LeafEventID    string          `json:"leaf_event_id,omitempty"`
	HeadIsEmpty    bool            `json:"head_is_empty"`
	Stats          Stats           `json:"stats"`
	SecretRegistry secret.Registry `json:"secret_registry"`
	// Tags are user key-value metadata: keys match ^[a-z0-9]+$, values are
	// at most 256 characters.
	Tags map[string]string `json:"tags" wire:"emitempty"`
	// AgentState is free-form agent runtime state.
	AgentState map[string]any `json:"agent_state" wire:"emitempty"`
	// HookConfig is the reference's HookConfig, kept as raw JSON; nil is
	// null.
	HookConfig json.RawMessage `json:"hook_config,omitempty"`
}

// NewFields returns the fields of a new conversation with the reference's
// defaults.
func NewFields(id string, agent, workspace any) *Fields {
	return &Fields{
		ID: id, Agent: agent, Workspace: workspace,
		MaxIterations: DefaultMaxIterations, StuckDetection: true,
		ExecutionStatus: StatusIdle,
	}
}

// Policy returns the confirmation policy, NeverConfirm if unset.
func (f *Fields) Policy() security.ConfirmationPolicy {
	if f.ConfirmationPolicy == nil {
		return &security.NeverConfirm{}
	}
	return f.ConfirmationPolicy
}

// clone returns a copy of f whose maps and slices may be modified without
// touching f. Slot values are shared: they are immutable by convention and
// replaced, never modified.
func (f *Fields) clone() *Fields {
	c := *f
	c.ActivatedKnowledgeSkills = slices.Clone(f.ActivatedKnowledgeSkills)
	c.ActivatedPathRules = slices.Clone(f.ActivatedPathRules)
	c.InvokedSkills = slices.Clone(f.InvokedSkills)
	c.BlockedActions = maps.Clone(f.BlockedActions)
	c.BlockedMessages = maps.Clone(f.BlockedMessages)
	c.Stats = f.Stats.clone()
	c.SecretRegistry.Sources = maps.Clone(f.SecretRegistry.Sources)
	c.Tags = maps.Clone(f.Tags)
	c.AgentState = maps.Clone(f.AgentState)
	c.HookConfig = bytes.Clone(f.HookConfig)
	return &c
}

var tagKey = regexp.MustCompile(`^[a-z0-9]+$`)

// Validate checks the fields the reference validates.
func (f *Fields) Validate() error {
	switch {
	case f.ID == "":
		return fmt.Errorf("conversation: state has no id")
	case f.Agent == nil:
		return fmt.Errorf("conversation: state %s has no agent", f.ID)
	case f.Workspace == nil:
		return fmt.Errorf("conversation: state %s has no workspace", f.ID)
	}
	return f.validateValues()
}

// validateValues is Validate without the agent and workspace, which a
// base state rebuilt from the events may lack (RebuildBase): New fills
// them on resume.
func (f *Fields) validateValues() error {
	switch {
	case f.ID == "":
		return fmt.Errorf("conversation: state has no id")
	case f.MaxIterations <= 0:
		return fmt.Errorf("conversation: max_iterations must be > 0, got %d", f.MaxIterations)
	case !f.ExecutionStatus.Valid():
		return fmt.Errorf("conversation: unknown execution status %q", f.ExecutionStatus)
	}
	for k, v := range f.Tags {
		if !tagKey.MatchString(k) {
			return fmt.Errorf("conversation: tag key %q must match ^[a-z0-9]+$", k)
		}
		if len([]rune(v)) > 256 {
			return fmt.Errorf("conversation: tag %q is longer than 256 characters", k)
		}
	}
	if v, ok := f.ConfirmationPolicy.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// member is one top-level field of base_state.json, encoded.
type member struct {
	key string
	val []byte
}

// encodeMembers encodes f in the reference's field order, omitting nulls.
// With a cipher, secrets are written as Fernet tokens; without, redacted.
func encodeMembers(f *Fields, c *secret.Cipher) ([]member, error) {
	// Validate requires the agent and the workspace before a write; a base
	// state rebuilt from the events may lack them (RebuildBase), and they
	// are left out.
	w := *f
	w.ConfirmationPolicy = f.Policy() // written even when it is the default
	if isNullJSON(w.HookConfig) {
		w.HookConfig = nil
	}
	if c != nil {
		if err := w.mapSecrets(c.Encrypt); err != nil {
			return nil, fmt.Errorf("conversation: encoding state: %w", err)
		}
	}
	var ms []member
	err := wire.EachMember(&w, func(key string, val []byte) error {
		ms = append(ms, member{key, bytes.Clone(val)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("conversation: encoding state: %w", err)
	}
	return ms, nil
}

// mapSecrets replaces the values of f that hold secrets (secret.Holder) by
// their secrets mapped through m: encrypted for the disk, or decrypted.
func (f *Fields) mapSecrets(m func(secret.String) (secret.String, error)) error {
	var err error
	mapped := func(v any) any {
		h, ok := v.(secret.Holder)
		if !ok || err != nil {
			return v
		}
		out, e := h.MapSecrets(m)
		if e != nil {
			err = e
			return v
		}
		return out
	}
	f.Agent = mapped(f.Agent)
	f.Workspace = mapped(f.Workspace)
	if p, ok := mapped(f.ConfirmationPolicy).(security.ConfirmationPolicy); ok {
		f.ConfirmationPolicy = p
	}
	if a, ok := mapped(f.SecurityAnalyzer).(security.Analyzer); ok {
		f.SecurityAnalyzer = a
	}
	if r, ok := mapped(f.SecretRegistry).(secret.Registry); ok {
		f.SecretRegistry = r
	}
	return err
}

// MarshalJSON encodes f as base_state.json is written without a cipher:
// in the reference's field order, nulls omitted, secrets redacted. It is
// the reference's state.model_dump(mode="json", exclude_none=True), the
// value of a full_state ConversationStateUpdateEvent.
func (f *Fields) MarshalJSON() ([]byte, error) {
	ms, err := encodeMembers(f, nil)
	if err != nil {
		return nil, err
	}
	return joinMembers(ms), nil
}

func joinMembers(ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.val) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, `":`...)
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// DecodeFields reads base_state.json. Absent fields take the reference's
// defaults; kind-tagged slots of unknown kinds are errors naming the slot
// and the kind. With a cipher, Fernet-encrypted secrets are decrypted (a
// secret that does not decrypt is dropped with a warning, as the reference
// does). Unknown keys are ignored, as the reference does.
func DecodeFields(data []byte, c *secret.Cipher) (*Fields, error) {
	f := NewFields("", nil, nil)
	f.PersistenceDir = DefaultPersistenceDir
	if err := event.UnmarshalJSON(data, f); err != nil {
		return nil, fmt.Errorf("conversation: decoding base state: %w", err)
	}
	if isNullJSON(f.HookConfig) {
		f.HookConfig = nil
	}
	if c != nil {
		err := f.mapSecrets(func(s secret.String) (secret.String, error) {
			p, err := c.Decrypt(s)
			if err != nil {
				slog.Warn("conversation: a secret in the base state does not decrypt with this key; dropping it")
				return secret.String{}, nil
			}
			return p, nil
		})
		if err != nil {
			return nil, fmt.Errorf("conversation: base state: %w", err)
		}
	}
	// Every commit encodes the stats again; with a cache, a resumed
	// conversation's long lists are encoded once, not once per commit.
	for _, mt := range f.Stats.UsageToMetrics {
		if mt != nil {
			mt.KeepEncodings()
		}
	}
	if err := f.validateValues(); err != nil {
		return nil, err
	}
	return f, nil
}

func isNullJSON(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}
