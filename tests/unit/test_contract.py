"""What parent and worker agree on: tasks, the worker's command line, file names, result shapes. Exact values."""

import sys

from tfscale import contract
from tfscale.contract import Task, cluster_tasks
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


def test_multi_worker_mirrored_tasks_are_all_trainers():
    assert cluster_tasks("multi_worker_mirrored", 3, None) == [
        Task("worker", 0, True),
        Task("worker", 1, True),
        Task("worker", 2, True),
    ]


def test_parameter_server_has_a_chief_servers_and_ps():
    tasks = cluster_tasks("parameter_server", 2, 2)
    assert [(t.name, t.trainer) for t in tasks] == [
        ("chief-0", True),
        ("worker-0", False),
        ("worker-1", False),
        ("ps-0", False),
        ("ps-1", False),
    ]


def test_a_single_process_config_is_a_cluster_of_one_task():
    specs = expand(parse_suite("name: c\nmatrix: {strategy: [one_device, multi_worker_mirrored]}\n", "c.yaml")).specs
    assert contract.tasks_of(specs[0]) == [Task("worker", 0, True)] == [contract.SINGLE]
    assert contract.tasks_of(specs[1]) == [Task("worker", 0, True)]  # a cluster of one worker


def test_worker_argv_is_the_one_command_line_of_every_mode():
    assert contract.worker_argv("r.json", contract.TRAIN, "s.json", "py") == [
        "py",
        "-m",
        "tfscale.worker",
        "--spec",
        "s.json",
        "--result",
        "r.json",
    ]
    assert contract.worker_argv("r.json", contract.COMMBENCH, "s.json")[:5] == [
        sys.executable,
        "-m",
        "tfscale.worker",
        "--commbench",
        "--spec",
    ]
    assert contract.worker_argv("r.json", contract.ENV)[3:] == ["--env", "--result", "r.json"]
    assert contract.worker_argv("r.json", contract.CHECK_MODELS, "m.json")[3:] == [
        "--check-models",
        "m.json",
        "--result",
        "r.json",
    ]


def test_task_files_and_their_template():
    task = Task("ps", 1, False)
    assert contract.task_file("work", "abc", contract.RESULT_SUFFIX, task) == "work/abc.ps-1.result.json"
    template = contract.task_file("work", "abc", contract.PROGRESS_SUFFIX)
    assert template == "work/abc.{task}.progress"
    assert contract.fill_task(template, task.name) == "work/abc.ps-1.progress"


def test_result_shapes():
    ok, failed = contract.ok_result({"x": 1}), contract.error_result("ValueError: y", "ValueError")
    assert (contract.result_ok(ok), contract.result_error(ok)) == (True, None)
    assert (contract.result_ok(failed), contract.result_error(failed)) == (False, "ValueError: y")
    assert (contract.result_ok(None), contract.result_error(None)) == (False, None)
