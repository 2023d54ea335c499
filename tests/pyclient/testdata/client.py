"""Drives an agent server with the Python reference's own client.

The program uses openhands.sdk's Conversation (a RemoteConversation, since
the workspace is a RemoteWorkspace) and the RemoteWorkspace itself,
unchanged, against the server at --server, with the scripted model of
playbook.json served by cmd/llmtest at --model. It prints a normalized
transcript as JSON: per scenario the sequence of event kinds with their
tool names, statuses and command outputs, with ids, timestamps and paths
replaced, so that two servers can be compared by equality.

    python client.py --server URL --api-key KEY --model URL --workdir DIR

Any failure of the client (an exception, a timeout, an event that did not
arrive over the WebSocket) is recorded in the transcript under "errors"
and makes the exit status 1.
"""

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time
import traceback

from pydantic import SecretStr

from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.security.confirmation_policy import AlwaysConfirm
from openhands.sdk.tool import Tool
from openhands.sdk.workspace import RemoteWorkspace
from openhands.tools.terminal import TerminalTool

TIMEOUT = 60.0


class Recorder:
    """Collects the events a conversation's callback receives over the socket."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ids = set()
        self.events = []

    def __call__(self, event):
        with self.lock:
            if event.id not in self.ids:
                self.ids.add(event.id)
                self.events.append(event)

    def seen(self, pred):
        with self.lock:
            return any(pred(e) for e in self.events)


class Normalizer:
    """Replaces run-specific strings (paths, ids) by stable placeholders."""

    def __init__(self, workdir):
        self.workdir = os.path.realpath(workdir)
        self.raw_workdir = workdir

    def __call__(self, s):
        if s is None:
            return None
        s = s.replace(self.workdir, "$WORKDIR").replace(self.raw_workdir, "$WORKDIR")
        s = re.sub(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", "$UUID", s)
        return s


def text_of(content):
    parts = []
    for c in content or []:
        t = c.get("text") if isinstance(c, dict) else getattr(c, "text", None)
        if t is not None:
            parts.append(t)
    return "\n".join(parts)


def describe(event, norm):
    """One line of the transcript for a persisted event."""
    d = event.model_dump(mode="json")
    kind = d.get("kind") or type(event).__name__
    out = {"kind": kind, "source": d.get("source")}
    if kind == "MessageEvent":
        msg = d.get("llm_message") or {}
        out["role"] = msg.get("role")
        out["text"] = norm(text_of(msg.get("content")))
    elif kind == "ActionEvent":
        out["tool"] = d.get("tool_name")
        action = d.get("action") or {}
        out["action"] = {k: v for k, v in action.items() if k in ("kind", "command", "message", "is_input")}
    elif kind == "ObservationEvent":
        out["tool"] = d.get("tool_name")
        obs = d.get("observation") or {}
        out["observation"] = obs.get("kind")
        out["exit_code"] = obs.get("exit_code")
        out["is_error"] = obs.get("is_error")
        out["text"] = norm(text_of(obs.get("content")))
    elif kind == "UserRejectObservation":
        out["tool"] = d.get("tool_name")
        out["reason"] = d.get("rejection_reason")
    elif kind in ("AgentErrorEvent", "ConversationErrorEvent"):
        out["error"] = norm(d.get("error") or d.get("detail"))
    elif kind == "ConversationStateUpdateEvent":
        out["key"] = d.get("key")
        if d.get("key") == "execution_status":
            out["value"] = d.get("value")
    return out


class Run:
    def __init__(self, args):
        self.args = args
        self.norm = Normalizer(args.workdir)
        self.transcript = {"scenarios": {}, "workspace": {}, "errors": []}
        self.workspace = RemoteWorkspace(
            host=args.server, working_dir=args.workdir, api_key=args.api_key
        )
        llm = LLM(
            model="openai/gpt-4o",
            base_url=args.model.rstrip("/") + "/v1",
            api_key=SecretStr("scripted"),
            usage_id="agent",
            num_retries=0,
        )
        self.agent = Agent(llm=llm, tools=[Tool(name=TerminalTool.name)])

    def conversation(self):
        rec = Recorder()
        conv = Conversation(
            agent=self.agent, workspace=self.workspace, callbacks=[rec], visualizer=None
        )
        return conv, rec

    def scenario(self, name, fn):
        entry = {"steps": []}
        self.transcript["scenarios"][name] = entry
        try:
            fn(entry)
        except Exception as e:  # recorded, compared, and fails the run
            self.transcript["errors"].append(f"{name}: {type(e).__name__}: {e}")
            traceback.print_exc()

    def status(self, conv):
        return str(conv.state.execution_status.value)

    def wait_status(self, conv, want):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            s = self.status(conv)
            if s in want:
                return s
            time.sleep(0.05)
        raise TimeoutError(f"status stayed {self.status(conv)}, want one of {want}")

    def events(self, conv, rec, entry):
        """Records the persisted events, checking each arrived over the socket."""
        lines = []
        for e in conv.state.events:
            d = describe(e, self.norm)
            # Snapshots (not persisted) and stats updates (sent after each
            # LLM call, racing the step's other events) come at times that
            # vary from run to run; the other events do not.
            if d.get("key") not in ("full_state", "stats"):
                lines.append(d)
            if e.id not in rec.ids and type(e).__name__ not in ("SystemPromptEvent",):
                self.transcript["errors"].append(
                    f"{type(e).__name__} {e.id} is in the REST history but never came over the socket"
                )
        entry["events"] = lines

    # --- scenarios -------------------------------------------------------

    def echo(self, entry):
        conv, rec = self.conversation()
        conv.send_message("#echo Print a greeting.")
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "run", "status": self.status(conv)})
        answer = conv.ask_agent("#ask What did you run?")
        entry["steps"].append({"after": "ask_agent", "response": answer, "status": self.status(conv)})
        self.events(conv, rec, entry)
        conv.close()

    def pause(self, entry):
        conv, rec = self.conversation()
        conv.send_message("#pause Take a nap.")
        conv.run(blocking=False)
        # Pause while the command runs: its action has been emitted, its
        # observation not yet.
        deadline = time.time() + TIMEOUT
        while not rec.seen(lambda e: type(e).__name__ == "ActionEvent"):
            if time.time() > deadline:
                raise TimeoutError("no ActionEvent over the socket")
            time.sleep(0.02)
        # The reference's POST /pause returns only once the step is over
        # (it waits for the state lock); whether it blocks is not compared.
        conv.pause()
        entry["steps"].append({"after": "paused", "status": self.wait_status(conv, {"paused"})})
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "resume", "status": self.status(conv)})
        self.events(conv, rec, entry)
        # The reference loses the output of the command that was running
        # when pause arrived (its observation text is ""); a server that
        # keeps it ("woke") does better. Anything else is wrong.
        for d in entry["events"]:
            if d.get("kind") == "ObservationEvent" and d.get("tool") == "terminal":
                if d.get("text") in ("", "woke"):
                    d["text"] = "'' or 'woke'"
        conv.close()

    def interrupt(self, entry):
        conv, rec = self.conversation()
        conv.send_message("#interrupt Think slowly.")
        conv.run(blocking=False)
        self.wait_status(conv, {"running"})
        time.sleep(0.5)  # the model's answer is on its way (a minute late)
        conv.interrupt()
        entry["steps"].append({"after": "interrupt", "status": self.wait_status(conv, {"paused"})})
        conv.send_message("#go-on Go on.")
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "run", "status": self.status(conv)})
        self.events(conv, rec, entry)
        conv.close()

    def confirm(self, entry):
        conv, rec = self.conversation()
        conv.set_confirmation_policy(AlwaysConfirm())
        conv.send_message("#confirm Ask before each command.")
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "run", "status": self.status(conv)})
        conv.run(timeout=TIMEOUT)  # accept: run the pending action
        entry["steps"].append({"after": "accept", "status": self.status(conv)})
        conv.reject_pending_actions("not this one")
        entry["steps"].append({"after": "reject", "status": self.wait_status(conv, {"idle", "paused", "finished"})})
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "run-after-reject", "status": self.status(conv)})
        self.events(conv, rec, entry)
        conv.close()

    def secret(self, entry):
        conv, rec = self.conversation()
        conv.update_secrets({"MY_TOKEN": "tok-5f3a9c"})
        conv.send_message("#secret Show the token.")
        conv.run(timeout=TIMEOUT)
        entry["steps"].append({"after": "run", "status": self.status(conv)})
        self.events(conv, rec, entry)
        leaked = [d for d in entry["events"] if "tok-5f3a9c" in json.dumps(d)]
        if leaked:
            self.transcript["errors"].append(f"secret value in events: {leaked}")
        conv.close()

    def workspace_ops(self, out):
        ws, wd = self.workspace, self.args.workdir
        r = ws.execute_command("echo out; echo err >&2; exit 3", cwd=wd, timeout=30)
        out["execute_command"] = {"exit_code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr}
        r = ws.execute_command("pwd", cwd=wd, timeout=30)
        out["execute_pwd"] = {"exit_code": r.exit_code, "stdout": self.norm(r.stdout)}
        # A command outliving its timeout: only the exit code is compared.
        # The reference's server reports the output only when it has
        # killed the command, about when its client stops waiting, and
        # the client's timeout_occurred depends on which came first.
        r = ws.execute_command("echo started; sleep 20", cwd=wd, timeout=2)
        out["execute_timeout"] = {"exit_code": r.exit_code}

        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "up.bin")
            payload = bytes(range(256)) * 64
            with open(src, "wb") as f:
                f.write(payload)
            r = ws.file_upload(src, os.path.join(wd, "sub", "up.bin"))
            out["file_upload"] = {"success": r.success}
            dst = os.path.join(tmp, "down.bin")
            r = ws.file_download(os.path.join(wd, "sub", "up.bin"), dst)
            with open(dst, "rb") as f:
                got = f.read()
            out["file_download"] = {"success": r.success, "same_bytes": got == payload}
            r = ws.file_download(os.path.join(wd, "no-such-file"), os.path.join(tmp, "x"))
            out["file_download_missing"] = {"success": r.success}

        repo = os.path.join(wd, "repo")
        r = ws.execute_command(
            "set -e; mkdir -p repo && cd repo && git init -q -b main && "
            "git config user.email t@example.com && git config user.name t && "
            "printf 'one\\ntwo\\n' > a.txt && printf 'gone\\n' > b.txt && "
            "git add . && git commit -q -m init && "
            "printf 'one\\nTWO\\n' > a.txt && rm b.txt && printf 'new\\n' > c.txt && echo ok",
            cwd=wd, timeout=30,
        )
        out["git_setup"] = {"exit_code": r.exit_code, "stdout": r.stdout}
        changes = ws.git_changes(repo)
        out["git_changes"] = sorted(
            ({"status": str(c.status.value), "path": str(c.path)} for c in changes),
            key=lambda c: c["path"],
        )
        d = ws.git_diff(os.path.join(repo, "a.txt"))
        out["git_diff"] = {"original": d.original, "modified": d.modified}
        d = ws.git_diff(os.path.join(repo, "c.txt"))
        out["git_diff_added"] = {"original": d.original, "modified": d.modified}

    def main(self):
        for name, fn in [
            ("echo", self.echo),
            ("pause", self.pause),
            ("interrupt", self.interrupt),
            ("confirm", self.confirm),
            ("secret", self.secret),
        ]:
            self.scenario(name, fn)
        try:
            self.workspace_ops(self.transcript["workspace"])
        except Exception as e:
            self.transcript["errors"].append(f"workspace: {type(e).__name__}: {e}")
            traceback.print_exc()
        return self.transcript


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--model", required=True, help="base URL of cmd/llmtest")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--out", help="write the transcript here instead of stdout")
    args = ap.parse_args()
    transcript = Run(args).main()
    text = json.dumps(transcript, indent=1, sort_keys=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    sys.exit(1 if transcript["errors"] else 0)


if __name__ == "__main__":
    main()
