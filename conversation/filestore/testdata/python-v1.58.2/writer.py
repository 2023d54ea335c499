# A reference 1.58.2 writer holding a conversation's event log open while
# another process appends: it appends one event, says "ready", waits for a
# line on stdin, appends another and prints the index the log gave it.
#   python writer.py <conversation dir>
import sys, warnings
warnings.filterwarnings("ignore")
from openhands.sdk.io.local import LocalFileStore
from openhands.sdk.conversation.event_store import EventLog
from openhands.sdk.event import MessageEvent
from openhands.sdk.llm import Message, TextContent

log = EventLog(LocalFileStore(sys.argv[1]), "events")


def msg(text):
    return MessageEvent(source="user", llm_message=Message(role="user", content=[TextContent(text=text)]))


print("first", log.append(msg("from python, first")), flush=True)
print("ready", flush=True)
sys.stdin.readline()
print("second", log.append(msg("from python, second")), flush=True)
