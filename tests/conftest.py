import os

import pytest
from click.testing import CliRunner

from tfscale.envinfo import CACHE_DIR_ENV


@pytest.fixture(scope="session", autouse=True)
def tfscale_cache(tmp_path_factory):
    """What tfscale measures once per host (the CPU peak) is cached under the test session's temporary folder,
    never in the user's ~/.cache: measured once per test session, and no file left behind."""
    before = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
