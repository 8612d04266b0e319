"""One owner per config process (tfscale.runner.claims): exclusive claim files, stale ones taken over."""

import json
import os
import socket
import subprocess
import sys

from tfscale.runner.claims import claim, claim_path, release


def test_a_claim_is_exclusive_until_released(tmp_path):
    assert claim(tmp_path, "abc") is None
    assert json.loads(claim_path(tmp_path, "abc").read_text()) == {"pid": os.getpid(), "host": socket.gethostname()}
    assert claim(tmp_path, "abc") == f"pid {os.getpid()} on {socket.gethostname()}"  # held: by a live process
    release(tmp_path, "abc")
    assert not (tmp_path / "claims").exists()  # no litter once every claim is released
    assert claim(tmp_path, "abc") is None


def test_a_claim_of_a_dead_owner_on_this_host_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = claim_path(tmp_path, "abc")
    path.parent.mkdir()
    path.write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    assert claim(tmp_path, "abc") is None
    assert json.loads(path.read_text())["pid"] == os.getpid()
    # another host's owner cannot be checked from here: it counts as alive
    path.write_text(json.dumps({"pid": int(dead.stdout), "host": "elsewhere"}))
    assert claim(tmp_path, "abc") == f"pid {int(dead.stdout)} on elsewhere"
