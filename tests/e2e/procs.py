"""Process checks shared by the end-to-end tests."""

import psutil


def workers_left() -> list[str]:
    """Command lines of tfscale worker processes still alive (a run must leave none)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or [])
        if "tfscale.worker" in cmdline:
            found.append(cmdline)
    return found
