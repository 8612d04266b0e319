"""`repeats: auto` (tfscale.suite.autorepeats): which configs run in more than one fresh process, exactly."""

from pathlib import Path

from tfscale.suite.planner import expand
from tfscale.suite.suitefile import load_suite, parse_suite

QUICKSTART = Path(__file__).resolve().parents[3] / "suites" / "quickstart.yaml"


def repeats_of(text: str) -> list[tuple[str, str | None, int, int]]:
    plan = expand(parse_suite(text, "s.yaml"))
    return [(s.model, s.strategy, s.nodes * s.devices_per_node, s.repeats) for s in plan.specs]


def test_the_quickstart_runs_each_model_s_baseline_and_mirrored_x2_twice():
    plan = expand(load_suite(QUICKSTART))
    twice = [(s.model, s.strategy, s.devices_per_node) for s in plan.specs if s.repeats > 1]
    assert twice == [
        (model, strategy, n)
        for model in ("mlp", "cnn", "transformer")
        for strategy, n in (("one_device", 1), ("mirrored", 2))
    ]
    assert {s.repeats for s in plan.specs} == {1, 2} and len(plan.specs) == 17


def test_one_config_alone_runs_in_four_processes():
    assert repeats_of("name: s\ndefaults: {repeats: auto}\nmatrix: {model: [mlp]}\n") == [("mlp", "one_device", 1, 4)]


def test_one_device_is_the_baseline_probe_even_after_mirrored_x1():
    text = (
        "name: s\ndefaults: {repeats: auto}\n"
        "matrix: {model: [mlp], strategy: [mirrored], devices_per_node: [1, 2, 4]}\n"
        "include: [{model: mlp, strategy: one_device}]\n"
    )
    # probes: one_device (not the earlier mirrored x1) and mirrored x2; two pairs are 2 degrees of freedom, so the
    # first probe in suite order (mirrored x2) gets a third process
    assert repeats_of(text) == [
        ("mlp", "mirrored", 1, 1),
        ("mlp", "mirrored", 2, 3),
        ("mlp", "mirrored", 4, 1),
        ("mlp", "one_device", 1, 2),
    ]


def test_without_a_one_device_config_the_first_probe_gets_the_third_process():
    text = (
        "name: s\ndefaults: {repeats: auto}\n"
        + "matrix: {model: [mlp], strategy: [mirrored], devices_per_node: [1, 2, 4]}"
    )
    assert repeats_of(text) == [("mlp", "mirrored", 1, 3), ("mlp", "mirrored", 2, 2), ("mlp", "mirrored", 4, 1)]


def test_configs_with_a_number_keep_it_and_count_towards_the_spread():
    text = (
        "name: s\ndefaults: {repeats: auto}\nmatrix: {model: [mlp, cnn], strategy: [mirrored], devices_per_node: [2]}\n"
        "include: [{model: transformer, strategy: mirrored, devices_per_node: 4, repeats: 3}]\n"
    )
    assert repeats_of(text) == [("mlp", "mirrored", 2, 2), ("cnn", "mirrored", 2, 2), ("transformer", "mirrored", 4, 3)]


def test_without_1_or_2_device_configs_processes_go_round_the_configs():
    text = (
        "name: s\ndefaults: {repeats: auto}\nmatrix: {model: [mlp, cnn], strategy: [mirrored], devices_per_node: [4]}\n"
    )
    assert repeats_of(text) == [("mlp", "mirrored", 4, 3), ("cnn", "mirrored", 4, 2)]


def test_auto_is_the_default_and_a_number_turns_it_off():
    text = "name: s\nmatrix: {model: [mlp], strategy: [mirrored], devices_per_node: [1, 2, 4]}\n"
    probes = [("mlp", "mirrored", 1, 3), ("mlp", "mirrored", 2, 2), ("mlp", "mirrored", 4, 1)]
    assert repeats_of(text) == probes  # the first probe's third process brings the run to 3 degrees of freedom
    once = text.replace("name: s\n", "name: s\ndefaults: {repeats: 1}\n")
    assert repeats_of(once) == [(model, strategy, n, 1) for model, strategy, n, _ in probes]
