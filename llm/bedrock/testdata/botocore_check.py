"""Independent checks of gohands' Bedrock client with botocore (the AWS SDK
for Python, from the reference venv).

Reads JSON lines on stdin, writes one JSON line per input:

  {"kind": "sign", "method", "url", "content_type", "body_b64", "amz_date",
   "access", "secret", "token", "region", "service"}
     -> {"authorization": ...}: what botocore's SigV4Auth signs the same
        request with at the same time.
  {"kind": "validate", "operation": "Converse", "body": {...}}
     -> {"errors": [...]}: the JSON body checked against the operation's
        input shape in botocore's bedrock-runtime service model (unknown
        keys, required members, unions with one member, enums, types,
        base64 blobs).
  {"kind": "eventstream", "data_b64"}
     -> {"messages": [{"headers": {...}, "payload": "..."}]}: the bytes
        decoded by botocore's event stream parser (prelude and message
        CRCs checked).
"""

import base64
import binascii
import datetime
import json
import sys

import botocore
import botocore.auth
import botocore.loaders
import botocore.model
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import EventStreamBuffer


def sign(req):
    when = datetime.datetime.strptime(req["amz_date"], "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *a, **k: when
    r = AWSRequest(
        method=req["method"],
        url=req["url"],
        data=base64.b64decode(req["body_b64"]),
        headers={"Content-Type": req["content_type"]},
    )
    creds = Credentials(req["access"], req["secret"], req.get("token") or None)
    botocore.auth.SigV4Auth(creds, req["service"], req["region"]).add_auth(r)
    return {"authorization": r.headers["Authorization"]}


_model = None


def validate(req):
    global _model
    if _model is None:
        data = botocore.loaders.create_loader().load_service_model("bedrock-runtime", "service-2")
        _model = botocore.model.ServiceModel(data, "bedrock-runtime")
    shape = _model.operation_model(req["operation"]).input_shape
    errors = []
    body = dict(req["body"])
    # Members bound to the path or headers are not in the body.
    members = {k: v for k, v in shape.members.items() if v.serialization.get("location") is None}
    check_members(shape, members, body, "$", errors)
    return {"errors": errors}


def check_members(shape, members, value, path, errors):
    if not isinstance(value, dict):
        errors.append(f"{path}: want an object for {shape.name}")
        return
    for k in value:
        if k not in members:
            errors.append(f"{path}.{k}: not a member of {shape.name}")
    for k in shape.required_members:
        if k in members and k not in value:
            errors.append(f"{path}: {shape.name} requires {k}")
    if shape.metadata.get("union") and len(value) != 1:
        errors.append(f"{path}: union {shape.name} has {len(value)} members set, want 1")
    for k, v in value.items():
        if k in members:
            check(members[k], v, f"{path}.{k}", errors)


def check(shape, value, path, errors):
    t = shape.type_name
    if shape.metadata.get("document"):
        return  # any JSON
    if t == "structure":
        check_members(shape, shape.members, value, path, errors)
    elif t == "list":
        if not isinstance(value, list):
            errors.append(f"{path}: want a list for {shape.name}")
            return
        lo = shape.metadata.get("min")
        if lo is not None and len(value) < lo:
            errors.append(f"{path}: {len(value)} items, {shape.name} wants at least {lo}")
        for i, v in enumerate(value):
            check(shape.member, v, f"{path}[{i}]", errors)
    elif t == "map":
        if not isinstance(value, dict):
            errors.append(f"{path}: want an object for {shape.name}")
            return
        for k, v in value.items():
            check(shape.value, v, f"{path}.{k}", errors)
    elif t == "string":
        if not isinstance(value, str):
            errors.append(f"{path}: want a string for {shape.name}")
            return
        if shape.enum and value not in shape.enum:
            errors.append(f"{path}: {value!r} not in {shape.name} {shape.enum}")
        lo = shape.metadata.get("min")
        if lo is not None and len(value) < lo:
            errors.append(f"{path}: {shape.name} shorter than {lo}")
    elif t == "blob":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, TypeError):
            errors.append(f"{path}: not base64 for {shape.name}")
    elif t in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{path}: want an integer for {shape.name}")
        elif shape.metadata.get("min") is not None and value < shape.metadata["min"]:
            errors.append(f"{path}: {value} below {shape.name}'s minimum")
    elif t in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            errors.append(f"{path}: want a number for {shape.name}")
    elif t == "boolean":
        if not isinstance(value, bool):
            errors.append(f"{path}: want a boolean for {shape.name}")
    elif t == "document":
        pass
    else:
        errors.append(f"{path}: unchecked type {t} of {shape.name}")


def eventstream(req):
    buf = EventStreamBuffer()
    buf.add_data(base64.b64decode(req["data_b64"]))
    out = []
    for m in buf:
        out.append({"headers": {k: str(v) for k, v in m.headers.items()}, "payload": m.payload.decode()})
    return {"messages": out}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        out = {"sign": sign, "validate": validate, "eventstream": eventstream}[req["kind"]](req)
        out["botocore"] = botocore.__version__
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
