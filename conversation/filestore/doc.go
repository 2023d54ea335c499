// Package filestore keeps conversations on disk in the reference's layout,
//
//	<base>/<conversation id hex>/base_state.json
//	<base>/<conversation id hex>/events/event-00000-<event id>.json
//
// so that gohands and the Python SDK can read each other's conversations.
// A [Store] is one conversation's conversation.Store; a [Backend] opens the
// stores of the conversations under one base directory and is what
// conversation.LocalOptions.Backend takes.
//
// A Store keeps gohands' own cache of event entries (IndexFile) so that
// opening a long conversation does not read every event file, and, unless
// Options.WriteThrough is set, a journal (JournalFile) that lets an append
// return once the event is in the page cache (a copy into a mapped file on
// Linux, one pwrite elsewhere) while the event's own file is created in
// the background. Opening a store recovers from a crash: journaled events
// are written to their files and a torn last event file is set aside.
//
// Store builds on Unix systems only (it relies on flock, and on Linux on
// getdents and mmap); elsewhere a Backend's Open fails with
// errors.ErrUnsupported, and the layout's names (Dir, BaseStateFile, ...)
// are there to read. The conversation core does not depend on this package.
package filestore
