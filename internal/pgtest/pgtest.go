//go:build unix

// Package pgtest runs a throw-away PostgreSQL server on loopback for
// tests, from the server binaries of Debian's postgresql package
// (installed by scripts/deps.d/45-postgres.sh).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/testenv"

	"golang.org/x/sys/unix"
)

// Server is a PostgreSQL server started for tests.
type Server struct {
	bin, dir, data string
	port           int
	cred           *syscall.Credential

	mu  sync.Mutex
	cmd *exec.Cmd
	dbs atomic.Int64
}

// BinDir returns the directory of the PostgreSQL server binaries:
// $GOHANDS_PG_BIN, or the newest /usr/lib/postgresql/N/bin.
func BinDir() (string, error) {
	if d := os.Getenv("GOHANDS_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql-15, or run scripts/deps.d/45-postgres.sh)")
}

// Start starts a server for the test binary; the caller stops it (from
// TestMain, typically). Under CI a missing PostgreSQL is an error the
// caller must fail on.
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gohands-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	// PostgreSQL refuses to run as root: run it as the postgres user then.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	out, err := s.command("initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// start starts the server process (on the same port when restarted) and
// waits until it accepts connections.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.port == 0 {
		p, err := freeport.Pick()
		if err != nil {
			return err
		}
		s.port = p
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	defer log.Close()
	if s.cred != nil {
		os.Chown(log.Name(), int(s.cred.Uid), int(s.cred.Gid))
	}
	// Durability off: a test database need not survive a power cut.
	cmd := s.command("postgres", "-D", s.data, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: postgres: %w", err)
	}
	s.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.dsn("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			go func() { <-exited }()
			return nil
		}
		select {
		case werr := <-exited:
			b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			s.cmd = nil
			return fmt.Errorf("pgtest: postgres exited at start: %v\n%s", werr, b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not accept connections within a minute: %w", err)
		}
	}
}

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// DSN returns the connection string of the server's postgres database.
func (s *Server) DSN() string { return s.dsn("postgres") }

// NewDatabase creates an empty database for one test and returns its
// connection string.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s.dsn(name)
}

// Restart stops the server (fast shutdown: connections are cut) and
// starts it again on the same port.
func (s *Server) Restart() error {
	s.stopProcess()
	return s.start()
}

// StopProcess stops the server process and leaves its data, so that a
// test can see what clients do while the database is down; Restart
// brings it back.
func (s *Server) StopProcess() { s.stopProcess() }

func (s *Server) stopProcess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(unix.SIGINT)
	pid := s.cmd.Process.Pid
	for range 300 {
		if unix.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.cmd.Process.Kill()
	s.cmd = nil
}

// Stop stops the server and removes its files.
func (s *Server) Stop() {
	s.stopProcess()
	os.RemoveAll(s.dir)
}

// Main is a TestMain for packages whose tests share one server, which it
// puts in *srv: it starts the server, runs the tests and stops it. A
// missing PostgreSQL fails the run under CI and leaves *srv nil elsewhere
// (tests then call Require, which skips them).
func Main(m *testing.M, srv **Server) {
	s, err := Start()
	if err != nil {
		if testenv.InCI() {
			fmt.Fprintf(os.Stderr, "prerequisite missing: PostgreSQL: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "pgtest: %v (tests needing PostgreSQL are skipped)\n", err)
	}
	*srv = s
	code := m.Run()
	if s != nil {
		s.Stop()
	}
	os.Exit(code)
}

// Require reports PostgreSQL missing when srv is nil (see Main).
func Require(t testing.TB, srv *Server) {
	t.Helper()
	if srv == nil {
		testenv.Missing(t, "PostgreSQL server binaries (scripts/deps.d/45-postgres.sh)")
	}
}
