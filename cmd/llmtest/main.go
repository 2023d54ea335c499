// Command llmtest serves a scripted model over HTTP for programs that are
// not Go tests: the Python reference's client and server, benchmarks. It
// speaks OpenAI Chat Completions, the Responses API, Anthropic Messages
// and Gemini, as package llm/llmtest does, answering from a playbook file
// (see llmtest.ParsePlaybook):
//
//	llmtest -playbook script.json [-addr 127.0.0.1:0] [-url-file path]
//
// It prints its base URL on the first line of standard output (OpenAI
// clients take URL+"/v1"), and writes it to -url-file when given, then
// serves until SIGINT or SIGTERM. A request no rule answers is logged on
// standard error and answered with HTTP 400.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"

	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("llmtest: ")
	playbook := flag.String("playbook", "", "playbook `file` (JSON) the replies come from (required)")
	addr := flag.String("addr", "127.0.0.1:0", "`address` to listen on")
	urlFile := flag.String("url-file", "", "also write the base URL to this `file`")
	record := flag.Bool("record", false, "keep every request in memory (off: long runs stay small)")
	flag.Parse()
	if *playbook == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	// Before the URL is printed: a caller may signal as soon as it has it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	defer stop()
	p, err := llmtest.ReadPlaybook(*playbook)
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := llmtest.NewResponder(nil, p.Respond, &llmtest.ResponderOptions{Listener: l, NoRecord: !*record})
	defer srv.Close()
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(srv.URL+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(srv.URL)
	<-ctx.Done()
}
