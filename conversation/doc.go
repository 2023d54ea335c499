// Package conversation holds a conversation's state and its event log: the
// event-sourced core of gohands.
//
// A [State] is the one mutable thing in a conversation. It holds the
// persisted fields of the reference's ConversationState ([Fields], written
// as base_state.json) and an append-only event log kept by a [Store]. Two
// stores are provided: [OpenFileStore] keeps the reference's on-disk layout,
//
//	<dir>/<conversation id hex>/base_state.json
//	<dir>/<conversation id hex>/events/event-00000-<event id>.json
//
// so that gohands and the Python SDK can read each other's conversations,
// and [NewMemoryStore] keeps everything in memory.
//
// A FileStore keeps gohands' own cache of event entries (IndexFile) so that
// opening a long conversation does not read every event file, and, unless
// FileOptions.WriteThrough is set, a journal that lets an append return
// once the event is in the page cache (a copy into a mapped file on Linux,
// one pwrite elsewhere) while the event's own file is created in the
// background.
//
// Reopening a conversation ([Open]) recovers from a crash: a torn last event
// file is set aside, the event tree's HEAD is brought up to date, and
// [State.RecoverRunning] settles a conversation that was running when its
// process died, as the reference's agent server does.
//
// On top of the State, [Conversation] is what applications use: send a
// message, run the agent, pause, confirm or reject actions, close. [New]
// builds one running in this process, a [LocalConversation], which drives
// a [Runner] (the agent) step by step through a [Session], masks secrets
// in every event before it is persisted, and watches for a stuck agent.
package conversation
