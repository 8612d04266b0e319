"""The JSON Schema of a suite file, for editors (the YAML language server validates and completes with it) and
for checks in CI. Pure: built from the pydantic models of `suite.suitefile` and the axes of `tfscale.axes`, so that a
new axis or choice appears in the schema without a second list.

The schema never refuses a suite `tfscale plan` accepts (a test checks thousands of generated suites): it is the
shape and the per-value rules. What depends on several keys at once (a strategy on a layout it cannot run, a user
model's name in `matrix.model`) is left to `tfscale plan`.
"""

from __future__ import annotations

import json
from typing import Any

from tfscale.axes import ALL_KEYS, AUTO, AXES, ZOO_MODELS, Axis
from tfscale.untrusted import NAME

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILE = "suite.schema.json"  # shipped beside the suites in suites/; `tfscale schema -o` writes one anywhere
# The first line of a suite that editors with the YAML language server read to find its schema.
LANGUAGE_SERVER_LINE = f"# yaml-language-server: $schema={SCHEMA_FILE}"

SUITE_DESCRIPTION = (
    "A tfscale suite: the configs to sweep (matrix, include, exclude), their defaults, and the suite's own models. "
    "Manual: docs/suites.md."
)
_DEF_PREFIX = "axis."  # $defs/axis.<name>: the schema of one value of that axis or setting
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def value_schema(axis: Axis) -> dict[str, Any]:
    """The schema of one value of an axis or run setting (what `check_value` accepts, or more)."""
    schema: dict[str, Any] = {"type": _JSON_TYPES[axis.kind]}
    if axis.choices is not None:
        schema["enum"] = list(axis.choices)
    if axis.minimum is not None:
        schema["minimum"] = axis.minimum
    if axis.maximum is not None:
        schema["maximum"] = axis.maximum
    if axis.name == "model":
        schema["examples"] = list(ZOO_MODELS)  # or a name under `models`: only the plan knows those
    if axis.name == "network_link":
        schema["examples"] = ["100mbit", "1gbit", "10gbit"]
    alternatives = [schema]
    if axis.auto:
        alternatives.append({"const": AUTO})
    if axis.nullable:
        alternatives.append({"type": "null"})
    value = alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}
    value["description"] = axis.help
    if axis.default is not None:
        value["default"] = axis.default
    return value


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{_DEF_PREFIX}{name}"}


def _keys(axes: dict[str, Axis], each=_ref) -> dict[str, Any]:
    """An object whose only keys are `axes`, each value's schema made by `each` from the axis name."""
    return {"type": "object", "properties": {name: each(name) for name in axes}, "additionalProperties": False}


def _one_or_list(name: str) -> dict[str, Any]:
    """exclude: a value, or a list of values any of which is excluded."""
    return {"anyOf": [_ref(name), {"type": "array", "items": _ref(name)}], "description": ALL_KEYS[name].help}


def _sweep(name: str) -> dict[str, Any]:
    return {"type": "array", "items": _ref(name), "minItems": 1, "description": ALL_KEYS[name].help}


def suite_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a suite file, as a dict."""
    from tfscale.suite.suitefile import LOADER_KEYS, Suite  # late: pydantic builds the models on import

    schema = Suite.model_json_schema()
    schema["$defs"].update({f"{_DEF_PREFIX}{name}": value_schema(axis) for name, axis in ALL_KEYS.items()})
    properties = schema["properties"]
    for key in LOADER_KEYS:  # set by the loader, refused in a file
        del properties[key]
    sweepable = {name: axis for name, axis in AXES.items() if axis.sweepable}
    properties["defaults"] = _keys(ALL_KEYS) | {"description": properties["defaults"]["description"]}
    properties["matrix"] = _keys(sweepable, _sweep) | {"description": properties["matrix"]["description"]}
    properties["exclude"] = {
        "type": "array",
        "items": _keys(ALL_KEYS, _one_or_list),
        "description": properties["exclude"]["description"],
    }
    entry = _keys(ALL_KEYS)
    entry["properties"]["network"] = {
        "$ref": "#/$defs/NetworkSettings",
        "description": "this entry's simulated network, {simulate: true, link: RATE}",
    }
    properties["include"] = {"type": "array", "items": entry, "description": properties["include"]["description"]}
    properties["models"]["propertyNames"] = {"pattern": f"^{NAME.pattern}$"}  # tfscale.untrusted: a name
    properties["commbench"]["anyOf"].insert(0, {"type": "boolean"})  # `commbench: true` takes the defaults
    # tfscale plan: "matrix: empty; give at least one axis" unless `include` names configs or `network` sweeps links.
    swept_links = {
        "required": ["simulate", "link"],
        "properties": {"simulate": {"const": True}, "link": {"type": "array"}},
    }
    schema["anyOf"] = [
        {"required": ["matrix"], "properties": {"matrix": {"minProperties": 1}}},
        {"required": ["include"], "properties": {"include": {"minItems": 1}}},
        {"required": ["network"], "properties": {"network": swept_links}},
    ]
    schema.update(title="tfscale suite", description=SUITE_DESCRIPTION)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def schema_text() -> str:
    """The schema as the JSON text `tfscale schema` writes (sorted keys: a diff shows what changed)."""
    return json.dumps(suite_schema(), indent=2, sort_keys=True) + "\n"
