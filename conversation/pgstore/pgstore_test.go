package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/pgstore"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/internal/pgtest"
)

var pg *pgtest.Server

func TestMain(m *testing.M) { pgtest.Main(m, &pg) }

// backend opens a backend on a fresh database.
func backend(t *testing.T, dsn string, opts *pgstore.Options) *pgstore.Backend {
	t.Helper()
	b, err := pgstore.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// load returns the log of s, failing the test on an error.
func load(t *testing.T, s conversation.Store) *conversation.Log {
	t.Helper()
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func TestStoreConformance(t *testing.T) {
	pgtest.Require(t, pg)
	b := backend(t, pg.NewDatabase(t), nil)
	storetest.Run(t, storetest.Factory{
		New: func(t *testing.T) conversation.Store {
			s, err := b.Open(context.Background(), uuid.NewString())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Reopen: func(t *testing.T, s conversation.Store) conversation.Store {
			id := s.(*pgstore.Store).ID()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := b.Open(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

// Two nodes: the second cannot open a conversation the first holds, and
// can once the first closes it.
func TestLeaseExcludes(t *testing.T) {
	pgtest.Require(t, pg)
	ctx := context.Background()
	dsn := pg.NewDatabase(t)
	a := backend(t, dsn, &pgstore.Options{Node: "a"})
	b := backend(t, dsn, &pgstore.Options{Node: "b"})
	id := uuid.NewString()
	sa, err := a.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, id); !errors.Is(err, conversation.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if err := b.Delete(context.Background(), id); !errors.Is(err, conversation.ErrLocked) {
		t.Fatalf("delete of a held conversation: %v, want ErrLocked", err)
	}
	if _, err := load(t, sa).Append(ctx, storetest.Events(1)[0]); err != nil {
		t.Fatal(err)
	}
	if err := sa.Close(); err != nil {
		t.Fatal(err)
	}
	sb, err := b.Open(ctx, id)
	if err != nil {
		t.Fatalf("open after the first node closed: %v", err)
	}
	if n := load(t, sb).Len(); n != 1 {
		t.Errorf("the second node sees %d events, want 1", n)
	}
	sb.Close()
	infos, err := a.List(context.Background())
	if err != nil || len(infos) != 1 || infos[0].ID != id || infos[0].Events != 1 || infos[0].Owner != "" {
		t.Errorf("list: %+v, %v", infos, err)
	}
	if err := a.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if infos, _ := a.List(context.Background()); len(infos) != 0 {
		t.Errorf("after delete: %+v", infos)
	}
}

// A node that stops renewing (dead, or partitioned) loses the lease after
// it expires; another node takes the conversation over, and the first can
// never write again, even when it comes back.
func TestLeaseTakeoverFences(t *testing.T) {
	pgtest.Require(t, pg)
	ctx := context.Background()
	dsn := pg.NewDatabase(t)
	a := backend(t, dsn, &pgstore.Options{Node: "a", Lease: 600 * time.Millisecond})
	b := backend(t, dsn, &pgstore.Options{Node: "b", Lease: 600 * time.Millisecond})
	id := uuid.NewString()
	st, err := a.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sa := st.(*pgstore.Store)
	la := load(t, sa)
	evs := storetest.Events(3)
	if _, err := la.Append(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	pgstore.StopHeartbeat(sa) // the node hangs
	var sb *pgstore.Store
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := b.Open(ctx, id)
		if err == nil {
			sb = s.(*pgstore.Store)
			break
		}
		if !errors.Is(err, conversation.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("takeover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer sb.Close()
	lb := load(t, sb)
	if _, err := la.Append(ctx, evs[1]); !errors.Is(err, pgstore.ErrLeaseLost) {
		t.Fatalf("append by the old owner: %v, want ErrLeaseLost", err)
	}
	if err := sa.WriteBase(ctx, []byte(`{}`)); !errors.Is(err, pgstore.ErrLeaseLost) {
		t.Fatalf("base write by the old owner: %v, want ErrLeaseLost", err)
	}
	select {
	case <-sa.Lost():
	default:
		t.Error("Lost not closed")
	}
	if _, err := lb.Append(ctx, evs[1]); err != nil {
		t.Fatalf("append by the new owner: %v", err)
	}
	if lb.Len() != 2 {
		t.Errorf("new owner has %d events, want 2", lb.Len())
	}
	sa.Close() // gives up nothing: the lease is b's
	if _, err := lb.Append(ctx, evs[2]); err != nil {
		t.Fatalf("the old owner's Close released the new owner's lease: %v", err)
	}
}

// The database going away fails writes with clear errors and loses
// nothing acknowledged. A store whose write failed gives the conversation
// up (the write's outcome is unknown: it may have been committed when the
// connection broke): its writes fail from then on, it stops renewing its
// lease, and once the lease expires the conversation opens again from
// the database, where the log carries on.
func TestDatabaseRestart(t *testing.T) {
	pgtest.Require(t, pg)
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	b := backend(t, srv.DSN(), &pgstore.Options{Timeout: 3 * time.Second, Lease: time.Second})
	id := uuid.NewString()
	st, err := b.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	log := load(t, st)
	evs := storetest.Events(3)
	if _, err := log.Append(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	srv.StopProcess()
	if _, err := log.Append(ctx, evs[1]); err == nil {
		t.Fatal("append with the database down succeeded")
	} else {
		t.Logf("append with the database down: %v", err)
	}
	if log.Len() != 1 {
		t.Fatalf("a failed append changed the log: %d events", log.Len())
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Append(ctx, evs[1]); !errors.Is(err, pgstore.ErrAbandoned) {
		t.Fatalf("append after a failed one: %v, want ErrAbandoned", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var st2 conversation.Store
	deadline := time.Now().Add(time.Minute)
	for {
		// Locked until the abandoned lease expires; the pool reconnects
		// on the next use.
		if st2, err = b.Open(ctx, id); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("reopening after the restart: %v", err)
	}
	defer st2.Close()
	log2 := load(t, st2)
	if log2.Len() != 1 {
		t.Errorf("after reopen: %d events, want 1", log2.Len())
	}
	if _, err := log2.Append(ctx, evs[1]); err != nil {
		t.Fatalf("append after reopening: %v", err)
	}
}

// The application's records, owners and orphans, as the agent server uses
// them.
func TestMetaOwnerOrphans(t *testing.T) {
	pgtest.Require(t, pg)
	dsn := pg.NewDatabase(t)
	a := backend(t, dsn, &pgstore.Options{Node: "http://a", Lease: 500 * time.Millisecond})
	b := backend(t, dsn, &pgstore.Options{Node: "http://b", Lease: 500 * time.Millisecond})
	ctx := context.Background()
	id := uuid.NewString()
	if _, ok, err := a.Meta(ctx, id); ok || err != nil {
		t.Fatalf("meta of an unknown conversation: %v, %v", ok, err)
	}
	if err := b.SetMeta(ctx, id, []byte(`{"title":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if m, ok, err := a.Meta(ctx, id); !ok || err != nil || string(m) != `{"title":"x"}` {
		t.Fatalf("meta: %s, %v, %v", m, ok, err)
	}
	if ms, err := a.Metas(ctx); err != nil || len(ms) != 1 || string(ms[id]) != `{"title":"x"}` {
		t.Fatalf("metas: %v, %v", ms, err)
	}
	st, err := a.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteBase(ctx, []byte(`{"id":"`+id+`"}`)); err != nil {
		t.Fatal(err)
	}
	if base, err := b.ReadBase(ctx, id); err != nil || string(base) != `{"id":"`+id+`"}` {
		t.Fatalf("base read by another node: %s, %v", base, err)
	}
	if owner, _, err := b.Owner(ctx, id); owner != "http://a" || err != nil {
		t.Fatalf("owner: %q, %v", owner, err)
	}
	pgstore.StopHeartbeat(st.(*pgstore.Store)) // a dies holding it
	deadline := time.Now().Add(20 * time.Second)
	for {
		orphans, err := b.Orphans(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(orphans) == 1 && orphans[0] == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphans: %v", orphans)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if owner, _, _ := b.Owner(ctx, id); owner != "" {
		t.Errorf("an expired lease still has an owner: %q", owner)
	}
	sb, err := b.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if orphans, _ := b.Orphans(ctx); len(orphans) != 0 {
		t.Errorf("orphans after the takeover: %v", orphans)
	}
}

// A snapshot reads a conversation another node holds, without its lease:
// the holder keeps writing, the snapshot refreshes to see what it wrote,
// and its own writes fail.
func TestSnapshotReadsWithoutLease(t *testing.T) {
	pgtest.Require(t, pg)
	dsn := pg.NewDatabase(t)
	a := backend(t, dsn, &pgstore.Options{Node: "a"})
	b := backend(t, dsn, &pgstore.Options{Node: "b"})
	id := uuid.NewString()
	ctx := t.Context()
	sa, err := a.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	la := load(t, sa)
	evs := storetest.Events(6)
	for _, e := range evs[:3] {
		if _, err := la.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := b.Snapshot(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Len() != 3 {
		t.Fatalf("the snapshot holds %d events, want 3", snap.Len())
	}
	for i := range 3 {
		want, _ := la.Raw(t.Context(), i)
		got, err := snap.Raw(t.Context(), i)
		if err != nil || string(got) != string(want) {
			t.Errorf("event %d: %s, %v; want %s", i, got, err, want)
		}
	}
	if owner, _, err := b.Owner(t.Context(), id); err != nil || owner != "a" {
		t.Errorf("owner after the snapshot: %q, %v; want a", owner, err)
	}
	for _, e := range evs[3:5] {
		if _, err := la.Append(ctx, e); err != nil {
			t.Fatalf("the holder's append after a snapshot: %v", err)
		}
	}
	old := snap
	if snap, err = snap.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Len() != 5 || old.Len() != 3 {
		t.Fatalf("the refreshed snapshot holds %d events, the first %d; want 5 and 3", snap.Len(), old.Len())
	}
	for i := range 5 {
		want, _ := la.Raw(t.Context(), i)
		if got, err := snap.Raw(t.Context(), i); err != nil || string(got) != string(want) {
			t.Errorf("refreshed, event %d: %s, %v; want %s", i, got, err, want)
		}
	}
	if i, ok := snap.Lookup(evs[4].EventBase().ID); !ok || i != 4 {
		t.Errorf("lookup of the last event: %d, %v", i, ok)
	}
	if _, err := snap.Append(ctx, evs[5]); !errors.Is(err, pgstore.ErrReadOnly) {
		t.Errorf("a snapshot's append: %v, want ErrReadOnly", err)
	}
	if err := snap.Store().WriteBase(ctx, []byte(`{}`)); !errors.Is(err, pgstore.ErrReadOnly) {
		t.Errorf("a snapshot's base write: %v, want ErrReadOnly", err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if owner, _, _ := b.Owner(t.Context(), id); owner != "a" {
		t.Errorf("owner after the snapshot's close: %q, want a", owner)
	}
	if _, err := la.Append(ctx, evs[5]); err != nil {
		t.Errorf("the holder's append after the snapshot closed: %v", err)
	}
}
