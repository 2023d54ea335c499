// Package docker runs the gohands agent server in a Docker container and
// gives a workspace.Workspace and a conversation endpoint on it: the same
// agent code runs on this machine or in a sandbox by changing only the
// workspace.
//
// The image is built on this machine by scripts/image.sh (a Debian minbase
// root filesystem with bash, coreutils, git, python3 and ripgrep, plus the
// static gohands binary running `gohands serve`). The package talks to the
// Docker Engine API over its socket (internal/dockerapi), not to the CLI.
//
// [New] returns a [Workspace]: a workspace.Workspace (a workspace.Remote
// on the container's server) that gohands.NewConversation runs
// conversations in. [Start] gives the bare [Container]; [Run] runs a
// command container to its end.
//
// Every container is labelled with [Label], removed by the engine when it
// stops, and stops when the program that started it exits, even by
// SIGKILL: the server reads its stdin, held open by this process through an
// attached connection, and shuts down when the kernel closes it.
package docker
