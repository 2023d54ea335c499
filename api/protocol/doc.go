// Package protocol holds the request and response bodies of the agent
// server's REST API (the reference's agent-server models), shared by the
// server (package server) and its clients (conversation/remote,
// workspace.Remote). It declares types only: the server validates and
// answers, the clients build requests and read answers.
//
// The struct tags beyond json (required, minLength, enum, description...)
// document the routes in the server's /openapi.json.
package protocol
