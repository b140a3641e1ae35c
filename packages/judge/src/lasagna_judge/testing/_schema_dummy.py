"""A FakeLLMServer's reply when it has no script: the simplest output that satisfies the JSON
schema the request asks for (its tool's parameters or its response_format), else "ok".
"""

from __future__ import annotations

import json
from typing import Any

from lasagna_judge.testing._responses import _tool_name


def _requested_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema the request asks the reply to follow, if any."""
    tools = request.get("tools")
    if tools and isinstance(tools[0], dict):
        name = _tool_name(request)
        for tool in tools:
            function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if function.get("name") == name:
                schema = function.get("parameters") or function.get("input_schema")
                return schema if isinstance(schema, dict) else None
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        schema = response_format.get("schema")
        if schema is None and isinstance(response_format.get("json_schema"), dict):
            schema = response_format["json_schema"].get("schema")
        return schema if isinstance(schema, dict) else None
    return None


def _schema_dummy(request: dict[str, Any]) -> str:
    """Like pydantic-ai's TestModel: the simplest output that satisfies the requested schema."""
    schema = _requested_schema(request)
    if schema is None:
        return "ok"
    return json.dumps(_dummy_value(schema, schema.get("$defs") or schema.get("definitions") or {}))


def _dummy_value(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    if depth > 20:
        return None
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return _dummy_value(target, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _dummy_value(schema[key][0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            name: _dummy_value(sub, defs, depth + 1)
            for name, sub in properties.items()
            if name in (schema.get("required") or properties)
        }
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [_dummy_value(schema.get("items") or {}, defs, depth + 1) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength", 1))
