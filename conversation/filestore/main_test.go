package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

// The tests re-execute their own binary as a child process to get a second
// process holding the lock, and a writer that can be killed mid-append.
const childEnv = "GOHANDS_CONVERSATION_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "locker":
		childLocker(os.Getenv("DIR"))
	case "writer":
		childWriter(os.Getenv("DIR"))
	case "reader":
		childReader(os.Getenv("DIR"))
	default:
		fmt.Fprintln(os.Stderr, "unknown child role")
		os.Exit(2)
	}
}

func childLocker(dir string) {
	s, err := openLog(dir, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n') // hold until the parent says so
	s.Close()
	fmt.Println("released")
}

// childReader opens the store in dir and decodes every event.
func childReader(dir string) {
	s, err := openLog(dir, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer s.Close()
	for i := range s.Len() {
		if _, err := s.Event(context.Background(), i); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
	}
	fmt.Println("read", s.Len())
}

// childWriter runs a conversation that appends action/observation cycles
// until it is killed, reporting each committed event on stdout.
func childWriter(dir string) {
	s, err := filestore.Open(dir, &filestore.Options{WriteThrough: os.Getenv("WB") != "1"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	st, err := conversation.Create(context.Background(), s, convtest.NewFields(), nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	st.Update(func(f *conversation.Fields) error { f.ExecutionStatus = conversation.StatusRunning; return nil })
	st.Append(convtest.UserMessage("go"))
	for i := 0; ; i++ {
		a, o := convtest.ActionCycle(i, 20000)
		if _, err := st.Append(a); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("event", a.ID)
		if _, err := st.Append(o); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("event", o.ID)
	}
}

// startChild starts the test binary in role with DIR=dir and returns it
// with a line reader on its stdout.
func startChild(t *testing.T, role, dir string, env ...string) (*exec.Cmd, *bufio.Scanner, func(string) error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role, "DIR="+dir), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	send := func(s string) error { _, err := fmt.Fprintln(stdin, s); return err }
	sc := bufio.NewScanner(out)
	return cmd, sc, send
}

func expectLine(t *testing.T, sc *bufio.Scanner, want string) {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- sc.Scan() }()
	select {
	case ok := <-done:
		if !ok || sc.Text() != want {
			t.Fatalf("child said %q (%v), want %q", sc.Text(), sc.Err(), want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not say %q", want)
	}
}
