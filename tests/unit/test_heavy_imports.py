"""The parent side must stay free of TensorFlow (and the CLI of pandas and plotly): checked in a fresh interpreter."""

import json
import subprocess
import sys

HEAVY = ("tensorflow", "keras", "pandas", "plotly")


def loaded_after(statement: str) -> dict[str, bool]:
    code = f"import sys, json; {statement}; print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_cli_imports_nothing_heavy():
    assert loaded_after("import tfscale.cli") == dict.fromkeys(HEAVY, False)


def test_plan_suite_runner_and_public_api_do_not_import_tensorflow():
    loaded = loaded_after(
        "import tfscale, tfscale.suite.planner, tfscale.suite.suitefile, tfscale.runner.configs, tfscale.host.envinfo"
    )
    assert loaded == dict.fromkeys(HEAVY, False)


def test_analysis_and_report_use_pandas_and_plotly_but_not_tensorflow():
    loaded = loaded_after("import tfscale.analysis, tfscale.htmlreport")
    assert loaded == {"tensorflow": False, "keras": False, "pandas": True, "plotly": True}
