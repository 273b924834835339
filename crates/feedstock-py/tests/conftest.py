import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
GOLDEN = REPO / "crates" / "feedstock" / "tests" / "data" / "golden"


@pytest.fixture
def golden():
    return GOLDEN
