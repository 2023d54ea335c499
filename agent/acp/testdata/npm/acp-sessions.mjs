// An ACP client on the official TypeScript SDK that drives an agent
// started as `node acp-sessions.mjs CWD MODEL COMMAND ARGS...` through the
// session management scenario and prints what it saw as JSON on stdout:
//
//   initialize (its session capabilities are recorded);
//   session/new in CWD (its config options and commands are recorded);
//   prompt 1; session/list for CWD and for another directory;
//   session/set_config_option model = MODEL; prompt 2;
//   a second client process is not needed: session/resume of the session
//   (the updates it sends are recorded: no history); prompt 3;
//   the /mode command, then the /model command with an unknown model.
// cmd/gohands's TestACPSessions runs it against `gohands acp`.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [cwd, model, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const out = { updates: [], resumeUpdates: [], stopReasons: [], commands: [], texts: [] };
let phase = "new";

const app = client({ name: "gohands-test-client" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(methods.client.session.update, async ({ params }) => {
    const u = params.update;
    const rec = { phase, kind: u.sessionUpdate };
    if (u.sessionUpdate === "available_commands_update") {
      out.commands = u.availableCommands.map((c) => c.name);
    }
    if (u.sessionUpdate === "agent_message_chunk" && u.content?.text) out.texts.push(u.content.text);
    if (u.sessionUpdate === "current_mode_update") rec.mode = u.currentModeId;
    if (u.sessionUpdate === "config_option_update") rec.model = u.configOptions?.[0]?.currentValue;
    (phase === "resume" ? out.resumeUpdates : out.updates).push(rec);
  });

const modelOf = (opts) => {
  const o = (opts ?? []).find((c) => c.id === "model");
  return o ? { current: o.currentValue, options: o.options.map((x) => x.value) } : null;
};

const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    out.capabilities = init.agentCapabilities?.sessionCapabilities ?? null;
    const s = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    out.sessionId = s.sessionId;
    out.newModel = modelOf(s.configOptions);
    const text = (t) => [{ type: "text", text: t }];

    phase = "prompt1";
    let r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("first task\nwith details") });
    out.stopReasons.push(r.stopReason);

    const listed = await ctx.request(methods.agent.session.list, { cwd });
    out.listed = listed.sessions.map((x) => ({ id: x.sessionId, cwd: x.cwd, title: x.title ?? null, updatedAt: x.updatedAt ?? null }));
    const elsewhere = await ctx.request(methods.agent.session.list, { cwd: cwd + "-elsewhere" });
    out.listedElsewhere = elsewhere.sessions.length;

    const set = await ctx.request(methods.agent.session.setConfigOption, { sessionId: s.sessionId, configId: "model", value: model });
    out.setModel = modelOf(set.configOptions);
    phase = "prompt2";
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("second task") });
    out.stopReasons.push(r.stopReason);

    phase = "resume";
    const res = await ctx.request(methods.agent.session.resume, { sessionId: s.sessionId, cwd, mcpServers: [] });
    out.resumeModel = modelOf(res.configOptions);
    out.resumeMode = res.modes?.currentModeId ?? null;
    phase = "prompt3";
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("third task") });
    out.stopReasons.push(r.stopReason);

    phase = "commands";
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("/mode always-approve") });
    out.stopReasons.push(r.stopReason);
    r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: text("/model no-such-model") });
    out.stopReasons.push(r.stopReason);
    try {
      await ctx.request(methods.agent.session.resume, { sessionId: "00000000-0000-4000-8000-000000000000", cwd, mcpServers: [] });
      out.resumeMissing = "accepted";
    } catch (e) {
      out.resumeMissing = String(e?.code ?? e);
    }
  });
} catch (e) {
  out.error = String(e?.stack ?? e);
}
child.stdin.end();
process.stdout.write(JSON.stringify(out) + "\n");
await new Promise((res) => child.once("exit", res));
