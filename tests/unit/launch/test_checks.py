"""Options that reach emitted scripts and cluster command lines (tfscale.launch.checks): each tool's syntax
accepted, anything else refused in one line naming the option."""

import pytest

from tfscale.errors import TfscaleError
from tfscale.launch.emit import LaunchOptions
from tfscale.launch.srun import SlurmOptions


@pytest.mark.parametrize(
    "options",
    [
        {"time_limit": "90"},
        {"time_limit": "1:30"},
        {"time_limit": "2:00:00"},
        {"time_limit": "1-12"},
        {"time_limit": "1-12:30:00"},
        {"time_limit": "UNLIMITED"},
        {"partition": "gpu,gpu-long", "account": "team_a.b+c"},
        {"hosts": ("h1", "h2.cluster.local:9001", "10.0.0.1:2222", "[fe80::1]:9000")},
        {"image": "registry.example.com:5000/team/tfscale:2.21@sha256:" + "a" * 64},
        {"python": "/opt/my env/bin/python3"},  # a space is a path's own (shlex-quoted in scripts)
        {"python": "$(touch x)"},  # kept as one literal word: quoted wherever it lands
        {"pod_memory": "512Mi", "pod_cpus": 1},
        {"port_base": 1},
    ],
)
def test_valid_options_pass(options):
    LaunchOptions(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"time_limit": "1:00\ntouch /tmp/x"}, "--time-limit '1:00\\ntouch /tmp/x': a Slurm time limit is"),
        ({"time_limit": "1 hour"}, "--time-limit '1 hour': a Slurm time limit is"),
        ({"partition": "gpu\n#SBATCH --uid=0"}, "--partition 'gpu\\n#SBATCH --uid=0': Slurm names are"),
        ({"account": "a b"}, "--account 'a b': Slurm names are"),
        ({"hosts": ("h1", "h2;rm -rf /")}, "--hosts 'h2;rm -rf /': a host is a name or address"),
        ({"hosts": ("h1:70000",)}, "--hosts 'h1:70000': a host is"),
        ({"image": "img\nrm"}, "--image 'img\\nrm': an image is"),
        ({"image": "img name"}, "--image 'img name': an image is"),
        ({"python": "py\nthon"}, "--python 'py\\nthon': holds \\n (U+000A)"),
        ({"python": ""}, "--python '': must be 1 to 4096 characters"),
        ({"port_base": 0}, "--port-base 0: 1 port(s) from it must lie in 1..65535"),
        ({"port_base": 70000}, "--port-base 70000: 1 port(s)"),
        ({"pod_cpus": 0}, "--pod-cpus 0: must be 1 to 4096"),
        ({"pod_memory": "32Gi\nx: y"}, "--pod-memory '32Gi\\nx: y': a Kubernetes quantity"),
    ],
)
def test_hostile_options_are_refused_naming_the_option(options, message):
    with pytest.raises(TfscaleError) as error:
        LaunchOptions(**options)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"time_limit": "2:00:00\n"}, "--time-limit '2:00:00\\n'"),
        ({"partition": "p;id"}, "--partition 'p;id'"),
        ({"extra": ("--gres=gpu:4", "--x\x1b[2J")}, "--slurm-arg '--x\\x1b[2J': holds \\x1b"),
    ],
)
def test_slurm_run_options_are_checked_too(options, message):
    SlurmOptions(partition="p", account="a", time_limit="1:00:00", extra=("--gres=gpu:4",))
    with pytest.raises(TfscaleError) as error:
        SlurmOptions(**options)
    assert str(error.value).startswith(message)
