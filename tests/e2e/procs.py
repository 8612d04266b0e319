"""Process checks and waiting, shared by the end-to-end tests."""

import time

import psutil


def workers_left(under) -> list[str]:
    """Command lines of tfscale worker processes still alive whose files are under the folder `under` (a run must
    leave none; workers of other runs on the machine, such as a second test session, are not this test's)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or [])
        if "tfscale.worker" in cmdline and str(under) in cmdline:
            found.append(cmdline)
    return found


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
