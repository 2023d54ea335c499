"""Validates request bodies against the official Python SDKs' request types.

Reads JSON lines {"api": "anthropic"|"gemini", "name": ..., "body": {...}}
on stdin and writes one JSON line per body: {"name": ..., "errors": [...]}.

anthropic: MessageCreateParamsNonStreaming / Streaming (TypedDicts) of the
`anthropic` package, unknown keys refused at every level.
gemini: the REST body's parts as the `google-genai` package's models
(Content, Tool, GenerationConfig, ToolConfig; they refuse unknown keys), and
no top-level key but those.
"""

import json
import sys

import pydantic


def iterables_as_lists():
    """pydantic validates an Iterable field lazily, as it is iterated, and
    its lazy validator loses the config of the types inside: the request
    types' Iterable fields (messages, content, tools...) are validated as
    lists instead, at once."""
    import typing

    from pydantic._internal import _generate_schema
    from pydantic_core import core_schema

    def list_schema(self, obj):
        args = typing.get_args(obj)
        return core_schema.list_schema(self.generate_schema(args[0]) if args else None)

    _generate_schema.GenerateSchema._iterable_schema = list_schema


def anthropic_validator():
    iterables_as_lists()
    import anthropic.types
    from anthropic.types import message_create_params as at
    import typing_extensions

    # Every request TypedDict refuses keys it does not declare (pydantic
    # lets them through by default).
    strict = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    models = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("anthropic.types"):
            for obj in vars(mod).values():
                if isinstance(obj, type) and typing_extensions.is_typeddict(obj):
                    obj.__pydantic_config__ = strict
                elif isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
                    # A message's content may also be the reply's blocks
                    # (models that allow any key): as strict.
                    obj.model_config = {**obj.model_config, "extra": "forbid"}
                    models.append(obj)
    class NonStreaming(pydantic.BaseModel):
        model_config = strict
        body: at.MessageCreateParamsNonStreaming

    class Streaming(pydantic.BaseModel):
        model_config = strict
        body: at.MessageCreateParamsStreaming

    def validate(body):
        model = Streaming if body.get("stream") else NonStreaming
        model.model_validate({"body": body})

    return validate


def gemini_validator():
    from google.genai import types as gt

    fields = {
        "contents": pydantic.TypeAdapter(list[gt.Content]),
        "systemInstruction": pydantic.TypeAdapter(gt.Content),
        "tools": pydantic.TypeAdapter(list[gt.Tool]),
        "generationConfig": pydantic.TypeAdapter(gt.GenerationConfig),
        "toolConfig": pydantic.TypeAdapter(gt.ToolConfig),
    }

    def validate(body):
        for k, v in body.items():
            if k not in fields:
                raise ValueError(f"unknown top-level key {k!r}")
            fields[k].validate_json(json.dumps(v))
        if "contents" not in body:
            raise ValueError("no contents")

    return validate


def main():
    validators = {}
    for line in sys.stdin:
        case = json.loads(line)
        api = case["api"]
        if api not in validators:
            validators[api] = {"anthropic": anthropic_validator, "gemini": gemini_validator}[api]()
        errors = []
        try:
            validators[api](case["body"])
        except pydantic.ValidationError as e:
            errors = [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
        except ValueError as e:
            errors = [str(e)]
        print(json.dumps({"name": case["name"], "errors": errors}), flush=True)


if __name__ == "__main__":
    main()
