"""Print, as JSON, every kind and start-request field of the installed
reference: the concrete DiscriminatedUnionMixin subclasses reachable once
its packages are imported, each with the family (base class) it belongs
to, and StartConversationRequest's field names. Read by
TestKindsAndFields158."""

import importlib
import inspect
import json
import logging
import pkgutil
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

for root in ("openhands.sdk", "openhands.tools", "openhands.workspace", "openhands.agent_server"):
    pkg = importlib.import_module(root)
    for info in pkgutil.walk_packages(pkg.__path__, root + "."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as e:  # an optional dependency: say so, go on
            print(f"kinds158: not imported: {info.name}: {type(e).__name__}", file=sys.stderr)

from openhands.agent_server.models import BashEventBase, StartConversationRequest
from openhands.sdk.agent.base import AgentBase
from openhands.sdk.context.condenser.base import CondenserBase
from openhands.sdk.critic.base import CriticBase
from openhands.sdk.event.base import Event
from openhands.sdk.secret.secrets import SecretSource
from openhands.sdk.security.analyzer import SecurityAnalyzerBase
from openhands.sdk.security.confirmation_policy import ConfirmationPolicyBase
from openhands.sdk.tool.schema import Action, Observation
from openhands.sdk.tool.tool import ToolDefinition
from openhands.sdk.utils.models import DiscriminatedUnionMixin
from openhands.sdk.workspace.base import BaseWorkspace

# Order matters: the first base a class derives from names its family.
FAMILIES = [
    ("action", Action),
    ("observation", Observation),
    ("event", Event),
    ("tool", ToolDefinition),
    ("security_analyzer", SecurityAnalyzerBase),
    ("confirmation_policy", ConfirmationPolicyBase),
    ("condenser", CondenserBase),
    ("critic", CriticBase),
    ("workspace", BaseWorkspace),
    ("agent", AgentBase),
    ("secret_source", SecretSource),
    ("bash_event", BashEventBase),
]
bases = {c for _, c in FAMILIES}


def subclasses(c):
    for s in c.__subclasses__():
        yield s
        yield from subclasses(s)


kinds = {}
for c in subclasses(DiscriminatedUnionMixin):
    name = c.__name__
    # Generic aliases (ToolDefinition[A, O]), bases and abstract classes
    # are never written as a kind.
    if "[" in name or c in bases or inspect.isabstract(c) or name.endswith("Base") or name == "Schema":
        continue
    family = next((f for f, b in FAMILIES if issubclass(c, b)), "other")
    kinds[name] = family

print(json.dumps({
    "kinds": [{"name": n, "family": f} for n, f in sorted(kinds.items())],
    "start_request_fields": list(StartConversationRequest.model_fields),
}, indent=1))
