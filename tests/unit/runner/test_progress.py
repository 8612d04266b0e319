from tfscale.runner.progress import Progress, eta_text, progress_line


def test_eta_text():
    assert eta_text(0.0, 0, 10) == "?"
    assert eta_text(30.0, 3, 10) == "1:10"
    assert eta_text(3600.0, 1, 3) == "2:00:00"
    assert eta_text(12.0, 4, 4) == "0:00"


def test_progress_lines():
    ok = {
        "model": "mlp",
        "model_size": "tiny",
        "strategy": "mirrored",
        "devices": 2,
        "status": "ok",
        "step_time_median_s": 0.00304,
    }
    bad = {
        "model": "mine",
        "model_size": None,
        "strategy": "one_device",
        "devices": 1,
        "status": "timeout",
        "reason": "timed out after 5 s",
    }
    assert (
        progress_line(1, 4, 10.0, ok)
        == "[#####...............] 1/4 ETA    0:30  mlp/tiny mirrored x2: ok, 3.04 ms/step"
    )
    lines = []
    ticks = iter([0.0, 8.0])
    Progress(4, lines.append, clock=lambda: next(ticks))(3, bad)
    assert lines == ["[####################] 4/4 ETA    0:00  mine one_device x1: timeout: timed out after 5 s"]
