"""The workers' scratch folder: named after its tfscale's pid, removed at exit, and by the next tfscale when its
owner was killed."""

import os
import subprocess
import sys

from tfscale.contract import PARENT_PID_ENV, TMPDIR_ENV
from tfscale.launch import scratch
from tfscale.launch.processes import dies_with_parent


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has it (until the kernel gives it again, not within this test)


def test_owner_pid_reads_only_scratch_names():
    assert scratch.owner_pid("tfscale-tmp-4242-abc_1") == 4242
    assert scratch.owner_pid("tfscale-worker-17-x") == 17
    assert scratch.owner_pid("tfscale-tmp-x-abc") is None
    assert scratch.owner_pid("__autograph_generated_file1.py") is None


def test_folders_of_dead_tfscales_are_removed_and_nothing_else(tmp_path):
    dead = tmp_path / f"tfscale-tmp-{dead_pid()}-a1"
    dead_worker = tmp_path / f"tfscale-worker-{dead_pid()}-d4"
    alive = tmp_path / f"tfscale-tmp-{os.getppid()}-b2"
    own = tmp_path / f"tfscale-tmp-{os.getpid()}-c3"
    other = tmp_path / "tfscale-call-x"
    for folder in (dead, dead_worker, alive, own, other):
        folder.mkdir()
        (folder / "__autograph_generated_file1.py").write_text("")
    assert sorted(scratch.remove_stale(tmp_path)) == sorted([dead, dead_worker])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, own, other))


def test_a_worker_gets_the_scratch_folder_as_tmpdir_and_srun_does_not(monkeypatch, tmp_path):
    monkeypatch.setattr(scratch, "_OWN", [tmp_path / "own"])
    _, env = dies_with_parent(["w"], {"A": "1"}, worker=True)
    assert env == {"A": "1", TMPDIR_ENV: str(tmp_path / "own"), PARENT_PID_ENV: str(os.getpid())}
    _, env = dies_with_parent(["srun"], {"A": "1"}, worker=False)
    assert env == {"A": "1"}


def test_the_folder_is_made_once_and_removed_at_exit(tmp_path):
    code = (
        f"import tempfile, pathlib; tempfile.tempdir = {str(tmp_path)!r}\n"
        "from tfscale.launch import scratch\n"
        "a = scratch.worker_tmpdir(); assert a == scratch.worker_tmpdir()\n"
        "(pathlib.Path(a) / 'left.py').write_text('')\n"
        # a rank that died during the run (after the folder was made): removed at exit too
        f"(pathlib.Path({str(tmp_path)!r}) / 'tfscale-worker-{dead_pid()}-x').mkdir()\n"
        "print(a)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    made = done.stdout.strip()
    assert made.startswith(str(tmp_path / "tfscale-tmp-")) and list(tmp_path.iterdir()) == []
