# The workflow tool's runner: it checks a workflow script, runs its
# `async def main(wf)` and asks the Go side, one JSON line per call on
# stdout, for each sub-agent the script starts; answers come back as JSON
# lines on stdin. The last line it writes is {"result": ...} or
# {"error": ...}. print() in the script goes to stderr (the logs).
import ast
import asyncio
import inspect
import json
import sys
import threading

MAX_SCRIPT = 20_000
MAX_REDUCE_INPUT = 12_000
NO_CALLS = {"breakpoint", "compile", "delattr", "dir", "eval", "exec", "getattr",
            "globals", "input", "locals", "open", "setattr", "vars", "__import__"}
NO_ROOTS = {"os", "subprocess"}
BUILTINS = {f.__name__: f for f in (
    abs, all, any, bool, dict, enumerate, float, format, int, isinstance, len, list,
    max, min, range, repr, round, set, sorted, str, sum, tuple, type, zip)}
BUILTINS.update(Exception=Exception, IndexError=IndexError, KeyError=KeyError,
                RuntimeError=RuntimeError, TypeError=TypeError, ValueError=ValueError)
BUILTINS["print"] = lambda *a, **k: print(*a, **{**k, "file": sys.stderr})


class ScriptError(Exception):
    pass


def root(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def check(src):
    if len(src) > MAX_SCRIPT:
        raise ScriptError(f"the script has {len(src)} characters, more than {MAX_SCRIPT}")
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise ScriptError(f"syntax error: {e}") from None
    mains = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "main"]
    if len(mains) != 1:
        raise ScriptError("the script must define one `async def main(wf):`")
    a = mains[0].args
    if [x.arg for x in a.args] != ["wf"] or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults:
        raise ScriptError("main must take exactly one argument: `async def main(wf):`")
    for n in ast.walk(tree):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            raise ScriptError("imports are not allowed")
        if isinstance(n, ast.Name) and n.id.startswith("__") or isinstance(n, ast.Attribute) and n.attr.startswith("__"):
            raise ScriptError("dunder names are not allowed")
        if isinstance(n, ast.Attribute) and root(n) == "wf" and (n.attr.startswith("_") or n.attr == "close"):
            raise ScriptError(f"wf.{n.attr} is not part of wf")
        if isinstance(n, ast.Attribute) and root(n) in NO_ROOTS:
            raise ScriptError(f"{root(n)} is not available")
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in NO_CALLS:
            raise ScriptError(f"{n.func.id}() is not allowed")


def render(template, item):
    if callable(template):
        return str(template(item))
    return template.replace("{item}", item if isinstance(item, str) else json.dumps(item, default=str))


def bounded(value):
    """The reducer's input: JSON, whole elements dropped from the end to fit."""
    if not isinstance(value, (list, dict)):
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return text if len(text) <= MAX_REDUCE_INPUT else text[:MAX_REDUCE_INPUT] + "\n... [input truncated]"
    elems = list(value.items()) if isinstance(value, dict) else list(value)
    pack = dict if isinstance(value, dict) else list
    for n in range(len(elems), 0, -1):
        text = json.dumps(pack(elems[:n]), indent=2, default=str)
        if n < len(elems):
            text += f"\n... [{len(elems) - n} of {len(elems)} items left out]"
        if len(text) <= MAX_REDUCE_INPUT or n == 1:
            return text if len(text) <= MAX_REDUCE_INPUT else text[:MAX_REDUCE_INPUT] + "\n... [input truncated]"
    return json.dumps(pack(), default=str)


class Channel:
    """Calls to the Go side, matched to their answers by number."""

    def __init__(self, loop):
        self.loop, self.next, self.waiting, self.lock = loop, 0, {}, threading.Lock()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in sys.stdin:
            msg = json.loads(line)
            fut = self.waiting.pop(msg["call"], None)
            if fut is not None:
                self.loop.call_soon_threadsafe(fut.set_result, msg)

    async def call(self, **req):
        self.next += 1
        fut = self.loop.create_future()
        self.waiting[self.next] = fut
        send({"call": self.next, **req})
        msg = await fut
        if "error" in msg:
            raise RuntimeError(msg["error"])
        return msg["result"]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


class Workflow:
    def __init__(self, channel, limit):
        self._ch, self._limit, self._sem = channel, limit, asyncio.Semaphore(limit)

    async def _agent(self, prompt, subagent_type, description):
        return await self._ch.call(prompt=str(prompt), subagent_type=subagent_type,
                                   description=None if description is None else str(description))

    async def run_agent(self, prompt, subagent_type="general-purpose", description=None):
        async with self._sem:
            return await self._agent(prompt, subagent_type, description)

    async def map_agents(self, items, prompt, subagent_type="general-purpose", max_concurrency=None, description=None):
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        sem = self._sem if max_concurrency is None else asyncio.Semaphore(min(max_concurrency, self._limit))

        async def one(i, item):
            p, d = render(prompt, item), None if description is None else render(description, item)
            async with sem:
                try:
                    return await self._agent(p, subagent_type, d)
                except Exception as e:
                    raise RuntimeError(f"[item {i + 1}] {e}") from e

        results = await asyncio.gather(*(one(i, x) for i, x in enumerate(items)), return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            raise ExceptionGroup("map_agents: one or more sub-agents failed",
                                 [e if isinstance(e, Exception) else RuntimeError(str(e)) for e in failed])
        return [str(r) for r in results]

    async def reduce_agent(self, items, prompt, subagent_type="general-purpose", description=None):
        return await self.run_agent(f"{prompt}\n\nInput:\n{bounded(items)}", subagent_type, description)

    async def pipeline(self, items, *stages):
        if not stages:
            raise ValueError("pipeline needs at least one stage")

        async def chain(i, value):
            try:
                for stage in stages:
                    value = stage(value)
                    if inspect.isawaitable(value):
                        value = await value
                return value
            except Exception as e:
                print(f"pipeline: item {i + 1} dropped: {e}", file=sys.stderr)
                return None

        return list(await asyncio.gather(*(chain(i, x) for i, x in enumerate(items))))

    def flatten(self, values):
        out = []
        for v in values:
            if isinstance(v, list):
                out.extend(v)
            else:
                out.append(v)
        return out


def describe(e):
    if isinstance(e, BaseExceptionGroup):
        return e.args[0] + ":\n" + "\n".join(f"  [{i}] {x}" for i, x in enumerate(e.exceptions, 1))
    return str(e) or type(e).__name__


async def run(src, limit):
    check(src)
    ns = {}
    exec(compile(src, "<workflow>", "exec"), {"__builtins__": BUILTINS}, ns)
    if not inspect.iscoroutinefunction(ns.get("main")):
        raise ScriptError("main must be async")
    return await ns["main"](Workflow(Channel(asyncio.get_running_loop()), limit))


def main():
    req = json.loads(sys.stdin.readline())
    if sys.version_info < (3, 11):
        send({"error": f"Workflows need Python 3.11 or later; this is {sys.version.split()[0]}"})
        return
    try:
        send({"result": str(asyncio.run(run(req["script"], req["max_concurrency"])))})
    except ScriptError as e:
        send({"error": f"Invalid workflow script: {e}"})
    except Exception as e:
        send({"error": describe(e)})


main()
