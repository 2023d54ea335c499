# The reference 1.58.2's side of TestAnalyzer158Continued, in one process
# (its imports take seconds):
#
# 1. It runs a conversation of its own to its finish, with a
#    PatternSecurityAnalyzer and ConfirmRisky: the terminal call is rated
#    (a SecurityAnalysisEvent on disk) and runs. It prints
#    "wrote <id> <status>" and waits for a line on standard input while
#    gohands continues the conversation.
# 2. It reads the conversation back: every event loads and re-dumps (as the
#    reference writes its event files, without None values) to the bytes on
#    disk; no field of base_state.json is one the reference does not know
#    (pydantic would drop it silently); the analyzer and the policy are the
#    ones it wrote, field for field, and so is the agent (null values and
#    the redacted key aside); nothing is logged at WARNING or above
#    and no Python warning is raised. It prints
#    "ok <event kinds> analyses <analyzer names>".
#
# The model is the scripted one of the Go test.
#   python analyzer158.py <model url> <persistence base> <workspace>
import sys, uuid, os, json, logging, warnings
from pydantic import SecretStr, BaseModel
from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.conversation.state import ConversationState
from openhands.sdk.event import SecurityAnalysisEvent
from openhands.sdk.security.confirmation_policy import ConfirmRisky
from openhands.sdk.security.defense_in_depth.pattern import PatternSecurityAnalyzer
from openhands.sdk.tool import Tool
from openhands.sdk.workspace import LocalWorkspace
import openhands.tools.terminal  # registers the terminal tool and its kinds

model, base, work = sys.argv[1:4]
llm = LLM(model="openai/gpt-4o", base_url=model.rstrip("/") + "/v1",
          api_key=SecretStr("scripted"), usage_id="agent", num_retries=0)

# 1. The reference's own conversation.
conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
                    workspace=work, persistence_dir=base, visualizer=None)
conv.set_confirmation_policy(ConfirmRisky())
conv.set_security_analyzer(PatternSecurityAnalyzer())
conv.send_message("REF-ANALYZER: list the files")
conv.run()
cid = str(conv.id)
d = os.path.join(base, uuid.UUID(cid).hex)
print("wrote", cid, conv.state.execution_status.value, flush=True)
conv.close()
def read(path):
    with open(path) as f:
        return f.read()


before = json.loads(read(os.path.join(d, "base_state.json")))
sys.stdin.readline()  # gohands has continued the conversation

# 2. Read back what gohands left.
records = []


class Keep(logging.Handler):
    def emit(self, record):
        records.append(record)


for name in ("", "openhands"):  # the openhands logger does not propagate
    logging.getLogger(name).addHandler(Keep(level=logging.WARNING))

with warnings.catch_warnings(record=True) as raised:
    warnings.simplefilter("always")
    after = json.loads(read(os.path.join(d, "base_state.json")))
    st = ConversationState.create(id=uuid.UUID(cid), agent=None,
                                  workspace=LocalWorkspace(working_dir=work), persistence_dir=d)
    events = list(st.events)
    names = sorted(x for x in os.listdir(os.path.join(d, "events")) if x.startswith("event-"))
    assert len(events) == len(names), (len(events), len(names))
    for i, e in enumerate(events):
        on_disk = read(os.path.join(d, "events", names[i]))
        assert e.model_dump_json(exclude_none=True) == on_disk, (i, e.model_dump_json(exclude_none=True), on_disk)


def unknown(m, raw, path):
    """The keys of raw (a model's JSON) that are no field of model m."""
    fields = type(m).model_fields
    known = {n: n for n in fields} | {f.alias: n for n, f in fields.items() if f.alias}
    known |= {n: n for n in type(m).model_computed_fields}  # dumped, read back (e.g. is_subscription)
    out = []
    for k, v in raw.items():
        if k == "kind":
            continue
        if k not in known:
            out.append(path + k)
            continue
        sub = getattr(m, known[k], None)
        if isinstance(sub, BaseModel) and isinstance(v, dict):
            out += unknown(sub, v, path + k + ".")
        elif isinstance(sub, (list, tuple)) and isinstance(v, list):
            for i, (a, b) in enumerate(zip(sub, v)):
                if isinstance(a, BaseModel) and isinstance(b, dict):
                    out += unknown(a, b, "%s%s[%d]." % (path, k, i))
    return out


extra = unknown(st, after, "")
assert not extra, ("fields the reference does not know", extra)
an = st.security_analyzer
assert type(an).__name__ == "PatternSecurityAnalyzer", type(an)
def meant(v):
    """v without null values (pydantic reads a null as the unset default)."""
    if isinstance(v, dict):
        return {k: meant(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [meant(x) for x in v]
    return v


for k in ("security_analyzer", "confirmation_policy"):
    assert after.get(k) == before.get(k), (k, "was", before.get(k), "is", after.get(k))
# The agent as the reference stored it: the same tools, condenser and
# model (its key, which the reference wrote redacted without a cipher,
# aside).
agent_before, agent_after = meant(before["agent"]), meant(after["agent"])
for a in (agent_before, agent_after):
    a["llm"].pop("api_key", None)
assert agent_after == agent_before, ("agent", "was", agent_before, "is", agent_after)
assert type(st.confirmation_policy).__name__ == "ConfirmRisky", type(st.confirmation_policy)
msgs = [r.getMessage() for r in records] + [str(w.message) for w in raised]
assert not msgs, ("warnings", msgs)
kinds = [type(e).__name__ for e in events]
print("ok", kinds, "analyses", [e.analyzer for e in events if isinstance(e, SecurityAnalysisEvent)], flush=True)
