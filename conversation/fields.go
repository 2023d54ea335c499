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
	ID string
	// Agent is the agent running the conversation (kind "Agent" or
	// "ACPAgent"). Required.
	Agent any
	// Workspace is where the agent works, e.g. *workspace.Local.
	// Required.
	Workspace any
	// PersistenceDir is the conversation directory; "" encodes as null.
	PersistenceDir  string
	MaxIterations   int
	StuckDetection  bool
	ExecutionStatus ExecutionStatus
	// ConfirmationPolicy is nil for the default, NeverConfirm.
	ConfirmationPolicy security.ConfirmationPolicy
	// SecurityAnalyzer is nil for none.
	SecurityAnalyzer         security.Analyzer
	ActivatedKnowledgeSkills []string
	ActivatedPathRules       []string
	InvokedSkills            []string
	// BlockedActions maps action ids to the reason a hook blocked them.
	BlockedActions map[string]string
	// BlockedMessages maps message ids to the reason a hook blocked them.
	BlockedMessages   map[string]string
	LastUserMessageID string
	// LeafEventID is the HEAD of the event tree: the parent of the next
	// appended event. "" means an empty tree, or a legacy linear log when
	// HeadIsEmpty is false.
	LeafEventID    string
	HeadIsEmpty    bool
	Stats          Stats
	SecretRegistry secret.Registry
	// Tags are user key-value metadata: keys match ^[a-z0-9]+$, values are
	// at most 256 characters.
	Tags map[string]string
	// AgentState is free-form agent runtime state.
	AgentState map[string]any
	// HookConfig is the reference's HookConfig, kept as raw JSON; nil is
	// null.
	HookConfig json.RawMessage
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
	var ms []member
	var err error
	add := func(key string, v any) {
		if err != nil {
			return
		}
		var b []byte
		b, err = event.MarshalJSON(v)
		if err != nil {
			err = fmt.Errorf("%s: %w", key, err)
			return
		}
		ms = append(ms, member{key, b})
	}
	addKinded := func(key string, v any, required bool) {
		if err != nil {
			return
		}
		if v == nil {
			if required {
				err = fmt.Errorf("%s is required", key)
			}
			return
		}
		if v, err = withSecrets(v, c); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
			return
		}
		var b []byte
		if b, err = event.MarshalKinded(v); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
			return
		}
		ms = append(ms, member{key, b})
	}
	add("id", f.ID)
	// Validate requires both before a write; a base state rebuilt from
	// the events may lack them (RebuildBase).
	addKinded("agent", f.Agent, false)
	addKinded("workspace", f.Workspace, false)
	if f.PersistenceDir != "" {
		add("persistence_dir", f.PersistenceDir)
	}
	add("max_iterations", f.MaxIterations)
	add("stuck_detection", f.StuckDetection)
	add("execution_status", f.ExecutionStatus)
	addKinded("confirmation_policy", f.Policy(), true)
	addKinded("security_analyzer", f.SecurityAnalyzer, false)
	add("activated_knowledge_skills", event.List[string](f.ActivatedKnowledgeSkills))
	add("activated_path_rules", event.List[string](f.ActivatedPathRules))
	add("invoked_skills", event.List[string](f.InvokedSkills))
	add("blocked_actions", event.Map[string, string](f.BlockedActions))
	add("blocked_messages", event.Map[string, string](f.BlockedMessages))
	if f.LastUserMessageID != "" {
		add("last_user_message_id", f.LastUserMessageID)
	}
	if f.LeafEventID != "" {
		add("leaf_event_id", f.LeafEventID)
	}
	add("head_is_empty", f.HeadIsEmpty)
	add("stats", f.Stats)
	if err == nil {
		var reg any = f.SecretRegistry
		if reg, err = withSecrets(reg, c); err == nil {
			add("secret_registry", reg)
		}
	}
	add("tags", event.Map[string, string](f.Tags))
	add("agent_state", event.Map[string, any](f.AgentState))
	if len(f.HookConfig) > 0 && !bytes.Equal(bytes.TrimSpace(f.HookConfig), []byte("null")) {
		add("hook_config", f.HookConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("conversation: encoding state: %w", err)
	}
	return ms, nil
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

// withSecrets returns v with its secrets encrypted by c, if v holds secrets
// and c is set. Without a cipher, secrets encode redacted by themselves.
func withSecrets(v any, c *secret.Cipher) (any, error) {
	h, ok := v.(secret.Holder)
	if !ok || c == nil {
		return v, nil
	}
	return h.MapSecrets(c.Encrypt)
}

// fieldsJSON mirrors base_state.json for decoding. The reference ignores
// unknown keys in it, and so do we.
type fieldsJSON struct {
	ID                       string            `json:"id"`
	Agent                    json.RawMessage   `json:"agent"`
	Workspace                json.RawMessage   `json:"workspace"`
	PersistenceDir           *string           `json:"persistence_dir"`
	MaxIterations            *int              `json:"max_iterations"`
	StuckDetection           *bool             `json:"stuck_detection"`
	ExecutionStatus          *ExecutionStatus  `json:"execution_status"`
	ConfirmationPolicy       json.RawMessage   `json:"confirmation_policy"`
	SecurityAnalyzer         json.RawMessage   `json:"security_analyzer"`
	ActivatedKnowledgeSkills []string          `json:"activated_knowledge_skills"`
	ActivatedPathRules       []string          `json:"activated_path_rules"`
	InvokedSkills            []string          `json:"invoked_skills"`
	BlockedActions           map[string]string `json:"blocked_actions"`
	BlockedMessages          map[string]string `json:"blocked_messages"`
	LastUserMessageID        *string           `json:"last_user_message_id"`
	LeafEventID              *string           `json:"leaf_event_id"`
	HeadIsEmpty              bool              `json:"head_is_empty"`
	Stats                    Stats             `json:"stats"`
	SecretRegistry           json.RawMessage   `json:"secret_registry"`
	Tags                     map[string]string `json:"tags"`
	AgentState               map[string]any    `json:"agent_state"`
	HookConfig               json.RawMessage   `json:"hook_config"`
}

// DecodeFields reads base_state.json. Absent fields take the reference's
// defaults; kind-tagged slots of unknown kinds are errors naming the slot
// and the kind. With a cipher, Fernet-encrypted secrets are decrypted (a
// secret that does not decrypt is dropped with a warning, as the reference
// does).
func DecodeFields(data []byte, c *secret.Cipher) (*Fields, error) {
	var m fieldsJSON
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("conversation: decoding base state: %w", err)
	}
	f := NewFields(m.ID, nil, nil)
	f.PersistenceDir = DefaultPersistenceDir
	if m.PersistenceDir != nil {
		f.PersistenceDir = *m.PersistenceDir
	}
	if m.MaxIterations != nil {
		f.MaxIterations = *m.MaxIterations
	}
	if m.StuckDetection != nil {
		f.StuckDetection = *m.StuckDetection
	}
	if m.ExecutionStatus != nil {
		f.ExecutionStatus = *m.ExecutionStatus
	}
	var err error
	slot := func(key string, raw json.RawMessage) any {
		if err != nil || isNullJSON(raw) {
			return nil
		}
		v, e := event.DecodeKinded[any](raw)
		if e == nil {
			v, e = decryptSecrets(v, c)
		}
		if e != nil {
			err = fmt.Errorf("conversation: base state %s: %w", key, e)
		}
		return v
	}
	f.Agent = slot("agent", m.Agent)
	f.Workspace = slot("workspace", m.Workspace)
	if p := slot("confirmation_policy", m.ConfirmationPolicy); p != nil {
		pol, ok := p.(security.ConfirmationPolicy)
		if !ok && err == nil {
			err = fmt.Errorf("conversation: base state confirmation_policy: %T is not a confirmation policy", p)
		}
		f.ConfirmationPolicy = pol
	}
	if a := slot("security_analyzer", m.SecurityAnalyzer); a != nil {
		an, ok := a.(security.Analyzer)
		if !ok && err == nil {
			err = fmt.Errorf("conversation: base state security_analyzer: %T is not a security analyzer", a)
		}
		f.SecurityAnalyzer = an
	}
	if err != nil {
		return nil, err
	}
	if !isNullJSON(m.SecretRegistry) {
		if err := json.Unmarshal(m.SecretRegistry, &f.SecretRegistry); err != nil {
			return nil, fmt.Errorf("conversation: base state secret_registry: %w", err)
		}
		v, err := decryptSecrets(f.SecretRegistry, c)
		if err != nil {
			return nil, fmt.Errorf("conversation: base state secret_registry: %w", err)
		}
		f.SecretRegistry = v.(secret.Registry)
	}
	f.ActivatedKnowledgeSkills = m.ActivatedKnowledgeSkills
	f.ActivatedPathRules = m.ActivatedPathRules
	f.InvokedSkills = m.InvokedSkills
	f.BlockedActions = m.BlockedActions
	f.BlockedMessages = m.BlockedMessages
	if m.LastUserMessageID != nil {
		f.LastUserMessageID = *m.LastUserMessageID
	}
	if m.LeafEventID != nil {
		f.LeafEventID = *m.LeafEventID
	}
	f.HeadIsEmpty = m.HeadIsEmpty
	f.Stats = m.Stats
	// Every commit encodes the stats again; with a cache, a resumed
	// conversation's long lists are encoded once, not once per commit.
	for _, mt := range f.Stats.UsageToMetrics {
		if mt != nil {
			mt.KeepEncodings()
		}
	}
	f.Tags = m.Tags
	f.AgentState = m.AgentState
	if !isNullJSON(m.HookConfig) {
		f.HookConfig = m.HookConfig
	}
	if err := f.validateValues(); err != nil {
		return nil, err
	}
	return f, nil
}

func decryptSecrets(v any, c *secret.Cipher) (any, error) {
	h, ok := v.(secret.Holder)
	if !ok || c == nil {
		return v, nil
	}
	return h.MapSecrets(func(s secret.String) (secret.String, error) {
		p, err := c.Decrypt(s)
		if err != nil {
			slog.Warn("conversation: a secret in the base state does not decrypt with this key; dropping it")
			return secret.String{}, nil
		}
		return p, nil
	})
}

func isNullJSON(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}
