"""OpenAI's Python client against an agent server's OpenAI-compatible
gateway. Prints one JSON object of what it saw; the Go test judges it.

usage: gateway_client.py BASE_URL API_KEY
"""
import json
import sys

import openai

base, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=60)
out = {}

out["models"] = [m.id for m in client.models.list().data]

raw = client.chat.completions.with_raw_response.create(
    model="openhands_scripted",
    messages=[
        {"role": "system", "content": "Answer as PIRATE-MODE."},
        {"role": "user", "content": "#gw-chat what is 2+2"},
    ],
)
chat = raw.parse()
conv_id = raw.headers.get("X-OpenHands-ServerConversation-ID")
out["chat"] = {
    "content": chat.choices[0].message.content,
    "role": chat.choices[0].message.role,
    "finish_reason": chat.choices[0].finish_reason,
    "object": chat.object,
    "conversation_id": conv_id,
    "total_tokens": chat.usage.total_tokens,
}

# The same conversation, continued: its id in the header.
again = client.chat.completions.with_raw_response.create(
    model="openhands_scripted",
    messages=[{"role": "user", "content": "#gw-again and now?"}],
    extra_headers={"X-OpenHands-ServerConversation-ID": conv_id},
)
out["again"] = {
    "content": again.parse().choices[0].message.content,
    "conversation_id": again.headers.get("X-OpenHands-ServerConversation-ID"),
}

deltas, usage, finish = [], None, None
stream = client.chat.completions.create(
    model="openhands_scripted",
    messages=[{"role": "user", "content": "#gw-stream count"}],
    stream=True,
    stream_options={"include_usage": True},
)
for chunk in stream:
    if chunk.usage is not None:
        usage = chunk.usage.total_tokens
    for c in chunk.choices:
        if c.delta.content:
            deltas.append(c.delta.content)
        if c.finish_reason:
            finish = c.finish_reason
out["stream"] = {"text": "".join(deltas), "usage": usage, "finish_reason": finish}

resp = client.responses.create(
    model="openhands_scripted",
    instructions="Answer as PIRATE-MODE.",
    input="#gw-resp say hi",
)
out["responses"] = {"text": resp.output_text, "status": resp.status, "object": resp.object}

resp2 = client.responses.create(
    model="openhands_scripted",
    input=[
        {"role": "developer", "content": "Answer as PIRATE-MODE."},
        {"role": "user", "content": [{"type": "input_text", "text": "#gw-resp2 hello"}]},
    ],
)
out["responses_items"] = {"text": resp2.output_text}

errors = {}
try:
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
except openai.APIStatusError as e:
    errors["unknown_model"] = e.status_code
try:
    client.responses.create(model="openhands_scripted", input="hi", stream=True)
except openai.APIStatusError as e:
    errors["responses_stream"] = e.status_code
bad = openai.OpenAI(base_url=base + "/v1", api_key="wrong-key", max_retries=0)
try:
    bad.models.list()
except openai.APIStatusError as e:
    errors["wrong_key"] = e.status_code
out["errors"] = errors
print(json.dumps(out))
