"""Fixtures of accel's Python tests: a CPU device per test, closed after it; the embedding model's folder and the
accel CLI (test_embed.py and test_openai_client.py compare with its output)."""

import os
import pathlib

import pytest

import accel


@pytest.fixture
def device():
    opened = accel.Device.open("cpu")
    yield opened
    opened.close()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(44)


REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def model_folder():
    """$ACCEL_MODEL_DIR, else the all-MiniLM-L6-v2 folder scripts/setup fetches into .deps/models."""
    return os.environ.get("ACCEL_MODEL_DIR") or str(REPOSITORY / ".deps" / "models" / "all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def accel_cli():
    """$ACCEL_CLI (scripts/test-python sets it to the release build's), else the release-cpu build's."""
    named = os.environ.get("ACCEL_CLI")
    path = pathlib.Path(named) if named else REPOSITORY / "build" / "release-cpu" / "src" / "cli" / "accel"
    if not path.exists():
        if named:
            pytest.fail(f"ACCEL_CLI={named} does not exist")
        pytest.skip(f"no accel CLI at {path} (build release-cpu or set ACCEL_CLI)")
    return path
