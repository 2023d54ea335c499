// An ACP client on the official TypeScript SDK that drives an agent
// started as `node acp-client.mjs CWD COMMAND ARGS...` through one
// scenario and prints what it saw as JSON on stdout:
//
//   initialize; session/new in CWD (its mode is recorded);
//   session/set_mode always-ask;
//   prompt 1 (its permission requests are allowed);
//   prompt 2, cancelled with session/cancel after its first update or 1s;
//   session/load of the session (its history is replayed);
//   prompt 3 in the loaded session.
//
// $ACP_MCP, if set, is the JSON list of MCP servers passed to session/new
// and session/load.
// cmd/gohands's TestACPClient runs it against `gohands acp`.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [cwd, command, ...args] = process.argv.slice(2);
const mcpServers = process.env.ACP_MCP ? JSON.parse(process.env.ACP_MCP) : [];
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const out = { updates: [], permissions: [], stopReasons: [], loadUpdates: [] };
let phase = "new";
let onUpdate = () => {};

const app = client({ name: "gohands-test-client" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    out.permissions.push({ title: params.toolCall.title, kind: params.toolCall.kind, options: params.options.map((o) => o.kind) });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(methods.client.session.update, async ({ params }) => {
    const u = params.update;
    const rec = { kind: u.sessionUpdate };
    if (u.content?.text) rec.text = u.content.text;
    if (Array.isArray(u.content)) {
      rec.content = u.content.map((c) => c.type);
      const d = u.content.find((c) => c.type === "diff");
      if (d) rec.diff = { path: d.path, oldText: d.oldText ?? null, newText: d.newText };
    }
    if (u.toolCallId) rec.id = u.toolCallId;
    if (u.status) rec.status = u.status;
    if (u.title) rec.title = u.title;
    if (u.entries) rec.entries = u.entries.length;
    (phase === "load" ? out.loadUpdates : out.updates).push(rec);
    onUpdate();
  });

const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    out.init = { protocolVersion: init.protocolVersion, loadSession: init.agentCapabilities?.loadSession, name: init.agentInfo?.name };
    const s = await ctx.request(methods.agent.session.new, { cwd, mcpServers });
    out.sessionId = s.sessionId;
    out.modes = s.modes?.availableModes.map((m) => m.id);
    out.initialMode = s.modes?.currentModeId;
    await ctx.request(methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "always-ask" });
    const text = (t) => [{ type: "text", text: t }];

    phase = "prompt1";
    let r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("create hello.txt") });
    out.stopReasons.push(r.stopReason);

    phase = "prompt2";
    const n = out.updates.length;
    const cancel = () => ctx.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
    const timer = setTimeout(cancel, 1000);
    onUpdate = () => { if (out.updates.length > n + 1) { clearTimeout(timer); onUpdate = () => {}; setTimeout(cancel, 200); } };
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("take your time") });
    clearTimeout(timer);
    onUpdate = () => {};
    out.stopReasons.push(r.stopReason);

    phase = "load";
    await ctx.request(methods.agent.session.load, { sessionId: s.sessionId, cwd, mcpServers });

    phase = "prompt3";
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("thanks") });
    out.stopReasons.push(r.stopReason);
  });
} catch (e) {
  out.error = String(e?.stack ?? e);
}
child.stdin.end();
process.stdout.write(JSON.stringify(out) + "\n");
await new Promise((res) => child.once("exit", res));
