"""The report's section "Environment": each run's env.json, one column per run."""

from __future__ import annotations

import html
import json
from typing import Any

from tfscale.htmlreport.sections.base import Context

ID = "environment"
TITLE = "Environment"

INTRO = "<p>Rows where runs differ are highlighted.</p>"


def _env_rows(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in _env_rows(f"{prefix}.{k}" if prefix else k, v)]
    return [(prefix, json.dumps(value) if isinstance(value, list) else str(value))]


def env_section(envs: dict[str, dict[str, Any]]) -> str:
    """Environment of each run, one column per run; rows where runs differ are highlighted."""
    if not envs:
        return "<p>No env.json found beside these records.</p>"
    flat = {run: dict(_env_rows("", env)) for run, env in envs.items()}
    keys = sorted({k for env in flat.values() for k in env} - {"captured_at"})
    head = "".join(f"<th>{html.escape(run)}</th>" for run in flat)
    rows = []
    for key in keys:
        values = [flat[run].get(key, "") for run in flat]
        cls = ' class="differs"' if len(set(values)) > 1 else ""
        cells = "".join(f"<td>{html.escape(v)}</td>" for v in values)
        rows.append(f"<tr{cls}><th>{html.escape(key)}</th>{cells}</tr>")
    return f'<table class="env"><thead><tr><th>key</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def body(context: Context) -> str:
    return INTRO + env_section(context.envs)
