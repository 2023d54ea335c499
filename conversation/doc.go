// Package conversation holds a conversation's state and its event log: the
// event-sourced core of gohands.
//
// A [State] is the one mutable thing in a conversation. It holds the
// persisted fields of the reference's ConversationState ([Fields], written
// as base_state.json) and an append-only event [Log] kept in a [Store].
//
// Stores are pluggable: the core knows only the [Store] interface, which is
// I/O (base state, load, append, raw read), while the [Log] over it keeps
// the index and checks appends the same way for every store; so the core
// builds on every platform and a new backend needs no change here. [NewMemoryStore] keeps
// a conversation in memory and is the default. Package
// conversation/filestore keeps the reference's on-disk layout, so that
// gohands and the Python SDK read each other's conversations; its Backend
// is what [LocalOptions].Backend takes. Package conversation/storetest is
// the suite every store passes.
//
// Reopening a conversation ([Open]) recovers from a crash: the event
// tree's HEAD is brought up to date (and a file store sets aside a torn
// last event file), and
// [State.RecoverRunning] settles a conversation that was running when its
// process died, as the reference's agent server does.
//
// On top of the State, [Conversation] is what applications use: send a
// message, run the agent, pause, confirm or reject actions, close. [New]
// builds one running in this process, a [LocalConversation], which drives
// a [Runner] (the agent) step by step through a [Session], masks secrets
// in every event before it is persisted, and watches for a stuck agent.
package conversation
