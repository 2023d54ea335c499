package conversation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Interrupt implements Conversation.
func (c *LocalConversation) Interrupt(ctx context.Context) error { return c.pause(true, true) }

// overBudget returns why the run must stop for its budget, or "" if it
// has none or has not spent it.
func (c *LocalConversation) overBudget(r Runner) string {
	if c.budget <= 0 {
		return ""
	}
	if err := r.SaveStats(); err != nil {
		c.log.Warn("budget: cannot save the model metrics", "err", err)
	}
	spent := c.state.Fields().Stats.TotalCost()
	if spent < c.budget {
		return ""
	}
	return budgetDetail(c.budget, spent)
}

// budgetDetail is the detail of a MaxBudgetReached error (the reference's
// wording, which readers may match).
func budgetDetail(limit, spent float64) string {
	return fmt.Sprintf("Agent reached maximum budget limit ($%.4f); accumulated cost $%.4f.", limit, spent)
}

// ForkOptions configure Fork. A nil *ForkOptions forks the whole
// conversation under a new id, with fresh metrics.
type ForkOptions struct {
	// ID is the fork's id; empty means a new random one. It must not name
	// a stored conversation.
	ID string
	// Agent runs the fork; nil means the source's.
	Agent Agent
	// Title, if set, is the fork's title, kept as the reference keeps it:
	// in the tag "title".
	Title string
	// Tags are the fork's tags (nil: none, as in the reference).
	Tags map[string]string
	// KeepMetrics copies the source's LLM metrics; by default the fork's
	// start at zero.
	KeepMetrics bool
	// FromEventID, if set, copies only the branch from the root to this
	// event and makes it the fork's HEAD; otherwise the whole log is
	// copied and the source's HEAD kept.
	FromEventID string
	// Options open the fork; nil means the source's options (its
	// Backend, Cipher, limits and logger; not its Store, ID, OnEvent or
	// Secrets: the fork gets a copy of the source's secret registry).
	Options *LocalOptions
}

// forkSeed is what a fork starts with: fields copied from the source and
// the events to copy, appended right after the fork's state is created.
type forkSeed struct {
	src    *Fields
	copies []event.Event
	leaf   string
	empty  bool
	keep   bool
	title  string
	tags   map[string]string
}

func (s *forkSeed) fields(f *Fields) {
	f.MaxIterations = s.src.MaxIterations
	f.StuckDetection = s.src.StuckDetection
	f.ActivatedKnowledgeSkills = slices.Clone(s.src.ActivatedKnowledgeSkills)
	f.ActivatedPathRules = slices.Clone(s.src.ActivatedPathRules)
	f.InvokedSkills = slices.Clone(s.src.InvokedSkills)
	f.AgentState = maps.Clone(s.src.AgentState)
	f.SecretRegistry = s.src.clone().SecretRegistry
	if f.ConfirmationPolicy == nil {
		f.ConfirmationPolicy = s.src.ConfirmationPolicy
	}
	if f.SecurityAnalyzer == nil {
		f.SecurityAnalyzer = s.src.SecurityAnalyzer
	}
	if f.HookConfig == nil {
		f.HookConfig = s.src.HookConfig
	}
	f.Tags = maps.Clone(s.tags)
	if s.title != "" {
		if f.Tags == nil {
			f.Tags = map[string]string{}
		}
		f.Tags["title"] = s.title
	}
	if s.keep {
		f.Stats = s.src.Stats.clone()
	}
}

func (s *forkSeed) events(st *State) error {
	return st.Do(func(tx *Tx) error {
		for _, e := range s.copies {
			if _, err := tx.Append(e); err != nil {
				return err
			}
		}
		f := tx.Fields()
		f.LeafEventID, f.HeadIsEmpty = s.leaf, s.empty
		tx.s.headDirty = true
		return nil
	})
}

// Fork copies the conversation into a new, independent one and returns it
// opened: same events (event ids kept), agent, workspace and settings,
// status idle. Running either one later does not change the other. A
// Run in progress is not waited for: the fork copies what is committed.
// FromEventID unknown fails with ErrNotFound, an ID already stored with
// ErrExists.
func (c *LocalConversation) Fork(ctx context.Context, opts *ForkOptions) (Conversation, error) {
	fork, err := c.fork(ctx, opts)
	if err != nil {
		return nil, err // not a nil *LocalConversation in an interface
	}
	return fork, nil
}

func (c *LocalConversation) fork(ctx context.Context, opts *ForkOptions) (*LocalConversation, error) {
	var fo ForkOptions
	if opts != nil {
		fo = *opts
	}
	if c.isClosed() {
		return nil, ErrConversationClosed
	}
	for k, v := range fo.Tags {
		if !tagKey.MatchString(k) || len([]rune(v)) > 256 {
			return nil, fmt.Errorf("conversation: fork: tag %q: keys match ^[a-z0-9]+$, values are at most 256 characters", k)
		}
	}
	src := c.state.Fields()
	seed := &forkSeed{src: src, keep: fo.KeepMetrics, title: fo.Title, tags: fo.Tags}
	var entries []Entry
	var err error
	if fo.FromEventID != "" {
		if _, ok := c.state.Events().Lookup(fo.FromEventID); !ok {
			return nil, fmt.Errorf("conversation: fork: %w: from_event_id %s", ErrNotFound, fo.FromEventID)
		}
		if entries, err = c.state.pathToRoot(fo.FromEventID); err != nil {
			return nil, fmt.Errorf("conversation: fork: %w", err)
		}
		seed.leaf = fo.FromEventID
	} else {
		entries = c.state.Events().Entries()
		seed.leaf = resolveLeaf(c.state.Events(), src)
		seed.empty = src.HeadIsEmpty
	}
	seed.copies = make([]event.Event, 0, len(entries))
	for _, en := range entries {
		// A decoded copy: the fork shares nothing with the source.
		raw, err := c.state.Events().Raw(ctx, en.Index)
		if err != nil {
			return nil, fmt.Errorf("conversation: fork: %w", err)
		}
		e, err := event.Unmarshal(raw)
		if err != nil {
			return nil, fmt.Errorf("conversation: fork: event %s: %w", en.ID, err)
		}
		seed.copies = append(seed.copies, e)
	}

	lo := c.opts
	if fo.Options != nil {
		lo = *fo.Options
	} else {
		lo.OnEvent, lo.Secrets = nil, nil
	}
	lo.Store, lo.ID, lo.seed = nil, fo.ID, seed
	if lo.ID == "" {
		lo.ID = uuid.NewString()
	}
	if lo.Backend != nil {
		// New would resume a stored conversation: refuse instead.
		store, err := lo.Backend.Open(ctx, lo.ID)
		if err != nil {
			return nil, fmt.Errorf("conversation: fork: %w", err)
		}
		base, err := store.ReadBase(ctx)
		if err == nil && base != nil {
			err = fmt.Errorf("conversation: fork: %s: %w", lo.ID, ErrExists)
		}
		if err != nil {
			store.Close()
			return nil, err
		}
		lo.Store = store
	}
	agent := fo.Agent
	if agent == nil {
		if agent, err = c.agent.ForkAgent(); err != nil {
			if lo.Store != nil {
				lo.Store.Close()
			}
			return nil, fmt.Errorf("conversation: fork: %w", err)
		}
	}
	fork, err := New(ctx, agent, c.workDir, &lo)
	if err != nil {
		return nil, err
	}
	c.copyIntoFork(ctx, fork)
	return fork, nil
}

// NavigateTo moves the HEAD of the event tree to eventID, or empties it
// when eventID is "": the next event (a message sent, say) becomes a child
// of eventID, starting a new branch. The model sees only the branch from
// the root to the HEAD; other branches stay in the log. It fails with
// ErrRunning during a Run and ErrNotFound for an unknown event.
func (c *LocalConversation) NavigateTo(ctx context.Context, eventID string) error {
	c.lockBetweenRuns()
	defer c.runMu.Unlock()
	switch {
	case c.closed:
		return ErrConversationClosed
	case c.running:
		return ErrRunning
	}
	if eventID != "" {
		if _, ok := c.state.Events().Lookup(eventID); !ok {
			return fmt.Errorf("conversation: navigate: %w: %s", ErrNotFound, eventID)
		}
	}
	err := c.state.Update(func(f *Fields) error {
		f.LeafEventID, f.HeadIsEmpty = eventID, eventID == ""
		return nil
	})
	if err != nil {
		return fmt.Errorf("conversation: navigate: %w", err)
	}
	// The view and the pending actions follow the new branch.
	c.viewMu.Lock()
	c.view, c.viewOK, c.pending, c.pendingOK = nil, false, nil, false
	c.viewMu.Unlock()
	return nil
}

// ErrCannotSwitch is returned by SwitchLLM for an agent whose model cannot
// be replaced (Runner.SwitchLLM).
var ErrCannotSwitch = errors.New("the agent's model cannot be switched")

// SwitchLLM makes the agent use the model cfg configures from the next
// step on (during a Run, the step in progress keeps its model); the
// persisted agent records it, so a resumed conversation keeps it. Metrics
// are kept per usage id: switching back to a usage id continues its
// metrics.
func (c *LocalConversation) SwitchLLM(ctx context.Context, cfg llm.Config) error {
	r, err := c.start(ctx)
	if err != nil {
		return err
	}
	c.lockBetweenRuns()
	defer c.runMu.Unlock()
	switch {
	case c.closed:
		return ErrConversationClosed
	case c.running:
		c.switchReq = &cfg // applied by the run loop before its next step
		return nil
	}
	return c.switchNow(r, cfg)
}

// applySwitch makes the switch SwitchLLM asked for during the run, if any.
func (c *LocalConversation) applySwitch(r Runner) error {
	c.runMu.Lock()
	cfg := c.switchReq
	c.switchReq = nil
	c.runMu.Unlock()
	if cfg == nil {
		return nil
	}
	return c.switchNow(r, *cfg)
}

func (c *LocalConversation) switchNow(r Runner, cfg llm.Config) error {
	a, err := r.SwitchLLM(cfg)
	if errors.Is(err, ErrCannotSwitch) {
		return err
	}
	if err != nil {
		return fmt.Errorf("conversation: switch llm: %w", err)
	}
	c.startMu.Lock()
	c.agent = a
	c.startMu.Unlock()
	return c.state.Update(func(f *Fields) error {
		f.Agent = a
		return nil
	})
}

// SwitchProfile is SwitchLLM to the LLM profile name of
// LocalOptions.Profiles (llm.ErrNoProfile if there is none of that name).
func (c *LocalConversation) SwitchProfile(ctx context.Context, name string) error {
	cfg, err := c.opts.Profiles.Profile(name)
	if err != nil {
		return err
	}
	return c.SwitchLLM(ctx, cfg)
}
