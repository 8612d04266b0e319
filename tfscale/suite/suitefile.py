"""YAML suite file → validated `Suite`.

Every error is a `SuiteError` whose one-line message names the file and the key (`matrix.strategy[1]`) and says
what is allowed. Pure: imports no TensorFlow.
"""

from __future__ import annotations

import copy
import math
import re
import reprlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tfscale.axes import ALL_KEYS, AUTO, AXES, SETTINGS, ZOO_MODELS, Axis
from tfscale.errors import SuiteError
from tfscale.suite.linkrate import parse_rate
from tfscale.untrusted import NAME, NAME_RULE, UntrustedFile, is_name, read_capped, unsafe_character, visible

_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class UserModel(BaseModel):
    """A suite's own model: `entry` is "module:function", called with `args` as keyword arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    entry: str = Field(pattern=_ENTRY.pattern)
    args: dict[str, Any] = Field(default_factory=dict)


class CommbenchSettings(BaseModel):
    """Suite option `commbench`: before the configs, sweep the all-reduce of each topology (`true` = defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    min_bytes: int = Field(1 << 10, ge=4)
    max_bytes: int = Field(64 << 20, ge=8)
    iters: int = Field(10, ge=1)
    warmup: int = Field(3, ge=1)


class NetworkSettings(BaseModel):
    """Suite option `network`: `{simulate: true, link: 1gbit}` (or a list of rates, swept as an axis) is the same
    as setting `network_link` in `defaults` (or `matrix`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    simulate: bool = False
    link: str | list[str] = "1gbit"


class Suite(BaseModel):
    """A validated suite. `path` is where it was read from (for messages and user-model imports), `text` what was
    read there; the loader sets both (LOADER_KEYS), a file may not."""

    # strict: a value of the wrong type is refused, not converted ("8" is not 8), as the axes' values are; the
    # JSON Schema (tfscale.suite.schema) then never refuses what the loader accepts.
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(
        pattern=f"^{NAME.pattern}$",
        description=f"names the results folder and the report: {NAME_RULE}",
    )
    description: str = Field("", description="one line shown at the top of the report")
    device: Literal["cpu", "gpu"] = Field(
        "cpu", description="cpu: logical CPU devices; gpu: the host's GPUs (refused before the sweep if absent)"
    )
    defaults: dict[str, Any] = Field(
        default_factory=dict, description="values of axes and run settings that every config takes unless swept"
    )
    matrix: dict[str, list[Any]] = Field(
        default_factory=dict, description="axes to sweep: each a list of values; the configs are their product"
    )
    exclude: list[dict[str, Any]] = Field(
        default_factory=list, description="partial configs to drop from the product (a list of values drops each)"
    )
    include: list[dict[str, Any]] = Field(
        default_factory=list, description="configs added to the product: each the defaults with these values"
    )
    models: dict[str, UserModel] = Field(
        default_factory=dict, description='the suite\'s own models: name -> {entry: "module:function", args}'
    )
    commbench: CommbenchSettings | None = Field(
        None, description="true: sweep the all-reduce of each topology before the configs (or these settings)"
    )
    network: NetworkSettings | None = Field(
        None, description="{simulate: true, link: 1gbit}: every node of a cluster strategy behind a shaped link"
    )
    path: str = ""
    text: str = ""  # the YAML as read (a dict's: as YAML), stored in each run folder (store.SUITE_FILE)

    @field_validator("commbench", mode="before")
    @classmethod
    def _commbench_flag(cls, value: Any) -> Any:
        if value is True:
            return {}
        return None if value is False else value

    @property
    def model_names(self) -> tuple[str, ...]:
        return ZOO_MODELS + tuple(self.models)


MAX_SUITE_BYTES = 1 << 20  # a suite is a page of YAML; anything this big is not one
MAX_ALIASES = 100  # YAML aliases (*name): a few share defaults; thousands nest into a billion-laughs bomb
# Values (scalars, lists and mappings) of the parsed suite, every alias expanded: a bomb of 80 aliases under
# MAX_ALIASES still expands to 10^9, and it would be expanded by the first copy or message that walks it.
MAX_VALUES = 100_000
# Nesting of lists and mappings: a suite's deepest is a user model's args, a few levels down. PyYAML's scanner is
# quadratic in flow nesting (40,000 "[" took 14.5 s before the recursion limit refused them): refused while scanning.
MAX_DEPTH = 32
_OPENS = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_CLOSES = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
_JSON_SCALARS = (str, int, float, bool, type(None))


def load_suite(path: str | Path) -> Suite:
    """Read, parse and validate a suite file (a regular file or a pipe, at most MAX_SUITE_BYTES). Raises SuiteError
    with a one-line message."""
    path = Path(path)
    try:
        data = read_capped(path, MAX_SUITE_BYTES, pipes=True)
    except UntrustedFile as e:
        raise SuiteError(f"{e}: not a suite file (at most {MAX_SUITE_BYTES} bytes of YAML in a file)") from None
    except OSError as e:
        raise SuiteError(f"{path}: cannot read suite file: {e.strerror or e}") from None
    if b"\0" in data:
        raise SuiteError(f"{path}: holds NUL bytes: not a YAML text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SuiteError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    return parse_suite(text, str(path))


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 2, 4, 4, 60, 60


def _short(value: Any) -> str:
    """The repr of a rejected value, cut short: an alias bomb's value would take minutes to write out whole."""
    return _REPR.repr(value)


def _scan(text: str, source: str) -> None:
    """Refuse, token by token before anything is built, YAML that nests deeper than MAX_DEPTH or has more than
    MAX_ALIASES aliases."""
    depth = aliases = 0
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, _OPENS):
            depth += 1
            if depth > MAX_DEPTH:
                raise SuiteError(f"{source}: nested too deeply to be a suite (over {MAX_DEPTH} levels)")
        elif isinstance(token, _CLOSES):
            depth -= 1
        elif isinstance(token, yaml.AliasToken):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise SuiteError(f"{source}: more than {MAX_ALIASES} YAML aliases (*name): refused, as an alias bomb")


def _where(where: str, key: object) -> str:
    key = visible(key)[:40] if isinstance(key, str) else _short(key)
    return f"{where}.{key}" if where else key


def check_data(data: Any, source: str) -> None:
    """Refuse what no suite holds, in document order, before anything copies or prints it: more than MAX_VALUES
    values once aliases are expanded, a value JSON cannot hold (YAML's !!binary, !!set, dates: a spec is JSON), a
    number that is not finite, a string with an unsafe character (tfscale.untrusted: a newline in a model name broke
    out of a script's comment line)."""
    todo: list[tuple[Any, str]] = [(data, "")]
    seen = 0
    while todo:
        value, where = todo.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise SuiteError(f"{source}: over {MAX_VALUES} values once its YAML aliases are expanded: not a suite")
        if isinstance(value, str):
            bad = unsafe_character(value)
            if bad is not None:
                raise SuiteError(
                    f"{source}: {where or 'the document'}: {bad} in '{visible(value)[:60]}': control, line-separator "
                    "and bidirectional characters are refused in a suite"
                )
        elif isinstance(value, float) and not math.isfinite(value):
            raise SuiteError(f"{source}: {where}: {value} is not a finite number")
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                inner = _where(where, key)
                bad = unsafe_character(key) if isinstance(key, str) else None
                if bad is not None:
                    raise SuiteError(
                        f"{source}: {inner}: {bad} in a key: control, line-separator and bidirectional characters "
                        "are refused in a suite"
                    )
                todo.append((item, inner))
        elif isinstance(value, list):
            todo.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(value))))
        elif not isinstance(value, _JSON_SCALARS):
            raise SuiteError(
                f"{source}: {where}: a YAML {type(value).__name__} is no suite value (text, numbers, true/false, "
                "lists and mappings)"
            )


def parse_suite(text: str, source: str = "<suite>") -> Suite:
    """Parse and validate suite YAML given as text; `source` names it in messages."""
    try:
        _scan(text, source)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise SuiteError(f"{source}{where}: YAML syntax error: {e.problem}") from None
    except yaml.YAMLError as e:
        raise SuiteError(f"{source}: YAML error: {e}") from None
    except RecursionError:
        raise SuiteError(f"{source}: nested too deeply to be a suite") from None
    check_data(data, source)
    return _validate(data, source, text)  # the parsed data is ours to rewrite


def suite_from_dict(data: Any, source: str = "<dict>") -> Suite:
    """Validate a suite given as the dict a suite file parses to (tfscale.run from Python); `source` names it in
    messages. The dict is not changed."""
    check_data(data, source)
    try:
        data = copy.deepcopy(data)  # _validate rewrites the network option and include entries in place
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if isinstance(data, dict) else ""
    except RecursionError:
        raise SuiteError(f"{source}: nested too deeply to be a suite") from None
    return _validate(data, source, text)


LOADER_KEYS = ("path", "text")  # Suite fields the loader sets: refused as keys of a suite


def _validate(data: Any, source: str, text: str) -> Suite:
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: a suite must be a mapping with at least `name` and `matrix`")
    unknown = next((key for key in data if key in LOADER_KEYS or not isinstance(key, str)), None)
    if unknown is not None:  # `1:` or `null:` cannot be a keyword
        raise SuiteError(f"{source}: {unknown if isinstance(unknown, str) else _short(unknown)}: unknown key")
    try:
        suite = Suite(**data, path=source, text=text)
    except ValidationError as e:
        raise SuiteError(f"{source}: {_pydantic_line(e)}") from None
    bad = next((name for name in suite.models if not is_name(name)), None)
    if bad is not None:  # a model name goes into labels, file names and the comments of emitted scripts
        raise SuiteError(f"{source}: models.{bad}: a model name is {NAME_RULE}")
    _apply_network(suite, source)
    _check_values(suite, source)
    return suite


def _apply_network(suite: Suite, source: str) -> None:
    """Turn the suite option `network` into the axis `network_link` (a default, or a matrix axis for a list), and
    an include entry's own `network` into its network_link."""
    for i, entry in enumerate(suite.include):
        if "network" in entry:
            try:
                option = NetworkSettings(**entry.pop("network")) if isinstance(entry.get("network"), dict) else None
            except ValidationError as e:
                raise SuiteError(f"{source}: include[{i}].network.{_pydantic_line(e)}") from None
            if option is None or isinstance(option.link, list):
                raise SuiteError(
                    f"{source}: include[{i}].network: give {{simulate: true, link: RATE}} with one "
                    "rate (a list of rates belongs in the suite's `network` or in matrix.network_link)"
                )
            entry["network_link"] = option.link if option.simulate else None
    if suite.network is None or not suite.network.simulate:
        return
    if "network_link" in suite.defaults or "network_link" in suite.matrix:
        raise SuiteError(f"{source}: network: the links are also given as network_link; give them in one place")
    links = suite.network.link
    if isinstance(links, list):
        if not links:
            raise SuiteError(f"{source}: network.link: empty list; give at least one rate such as 1gbit")
        suite.matrix["network_link"] = list(links)
    else:
        suite.defaults["network_link"] = links


def _pydantic_line(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return f"{loc}: unknown key"
    if err["type"] == "missing":
        return f"{loc}: required key is missing"
    if err["type"] == "string_pattern_mismatch" and loc.endswith("entry"):
        return f'{loc}: must be "module:function", got {_short(err["input"])}'
    return f"{loc}: {err['msg']} (got {_short(err['input'])})"


def _check_values(suite: Suite, source: str) -> None:
    models = suite.model_names
    for key, value in suite.defaults.items():
        check_value(f"defaults.{key}", key, value, models, source)
    if not suite.matrix and not suite.include:
        raise SuiteError(f"{source}: matrix: empty; give at least one axis with a list of values")
    for key, values in suite.matrix.items():
        axis = _axis(f"matrix.{key}", key, source)
        if not axis.sweepable:
            raise SuiteError(f"{source}: matrix.{key}: a run setting cannot be swept; set it in `defaults`")
        if not values:
            raise SuiteError(f"{source}: matrix.{key}: empty list; give at least one value")
        for i, value in enumerate(values):
            check_value(f"matrix.{key}[{i}]", key, value, models, source)
    for section in ("exclude", "include"):
        for i, partial in enumerate(getattr(suite, section)):
            for key, value in partial.items():
                where = f"{section}[{i}].{key}"
                # exclude may name several values of one key at once
                values = value if section == "exclude" and isinstance(value, list) else [value]
                for v in values:
                    check_value(where, key, v, models, source)


def _axis(where: str, key: str, source: str) -> Axis:
    axis = ALL_KEYS.get(key)
    if axis is None:
        allowed = ", ".join(list(AXES) + list(SETTINGS))
        raise SuiteError(f"{source}: {where}: unknown key {key!r}; allowed: {allowed}")
    return axis


def check_value(where: str, key: str, value: Any, models: tuple[str, ...], source: str) -> None:
    """Raise SuiteError unless `value` is a valid value of axis/setting `key`."""
    axis = _axis(where, key, source)
    if value is None:
        if axis.nullable:
            return
        raise SuiteError(f"{source}: {where}: must not be empty")
    if axis.auto and value == AUTO:
        return
    if not _has_type(value, axis.kind):
        expected = f"{axis.kind.__name__} or {AUTO}" if axis.auto else axis.kind.__name__
        raise SuiteError(f"{source}: {where}: expected {expected}, got {_short(value)}")
    if key == "model":
        if value not in models:
            raise SuiteError(
                f"{source}: {where}: unknown model {_short(value)}; allowed: {', '.join(models)} "
                "(user models are declared under `models`)"
            )
        return
    if key == "network_link":
        try:
            parse_rate(value)
        except ValueError as error:
            raise SuiteError(f"{source}: {where}: {error}") from None
        return
    if axis.choices is not None and value not in axis.choices:
        what = "strategy" if key == "strategy" else "value"
        raise SuiteError(f"{source}: {where}: unknown {what} {_short(value)}; allowed: {', '.join(axis.choices)}")
    if axis.minimum is not None and value < axis.minimum:
        raise SuiteError(f"{source}: {where}: must be >= {_bound(axis.minimum)}, got {_short(value)}")
    if axis.maximum is not None and not value <= axis.maximum:  # `not <=`: NaN compares False (check_data refuses it)
        raise SuiteError(f"{source}: {where}: must be <= {_bound(axis.maximum)}, got {_short(value)}")


def _bound(limit: float) -> str:
    return str(limit) if isinstance(limit, int) else f"{limit:g}"


def _has_type(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):  # bool is an int subclass: `steps: true` is a mistake
        return False
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)
