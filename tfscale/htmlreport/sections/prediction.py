"""The report's section "Prediction check: the largest device count from the smaller ones": the scaling model checked
on a held-out count."""

from __future__ import annotations

import html

from tfscale import metrics as m
from tfscale.htmlreport.parts import records_table
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "prediction"
TITLE = "Prediction check: the largest device count from the smaller ones"


def body(context: Context) -> str | Omitted:
    frame = context.view
    from tfscale.analysis.predict import LOGICAL_WARNING, METHOD, holdout, unmodelled

    caveats = "".join(
        f"<li>not predicted: {html.escape(what)}: {html.escape(why)}</li>" for what, why in unmodelled(frame)
    )
    if (frame.get(m.DEVICE_KIND) == "cpu-logical").any():
        caveats += f"<li>warning: {html.escape(LOGICAL_WARNING)}</li>"
    caveats = f"<ul>{caveats}</ul>" if caveats else ""
    checks = holdout(frame)
    if checks.empty:
        return Omitted(
            "no workload and strategy measured at three or more device counts above one with communication timed "
            "(fitted on fewer points, the model's two parameters fit any points: a check would validate nothing)"
        )
    columns = (
        m.MODEL,
        m.STRATEGY,
        m.NETWORK_LINK,
        m.DEVICES,
        m.FITTED_ON,
        m.MEASURED_STEP_S,
        m.PREDICTED_STEP_S,
        m.PREDICTED_STEP_CI95_LOW_S,
        m.PREDICTED_STEP_CI95_HIGH_S,
        m.PREDICTION_ERROR,
        m.INSIDE_INTERVAL,
    )
    return (
        f'<p class="method">{html.escape(METHOD)} <code>tfscale predict RUN --devices 8 16 64</code> '
        f"predicts other counts.</p>{caveats}" + records_table(checks.assign(status=m.STATUS_OK, config_id=""), columns)
    )
