"""The package as a user installs it: the build it reports, and the
warning a debug build gives at import."""

import os
import subprocess
import sys

import feedstock._native as native


def _import_stderr(env_extra):
    env = {k: v for k, v in os.environ.items() if k != "FEEDSTOCK_ALLOW_DEBUG_BUILD"}
    env.update(env_extra)
    done = subprocess.run(
        [sys.executable, "-c", "import feedstock"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stderr


def test_a_debug_build_says_so_at_import_and_a_release_build_does_not():
    stderr = _import_stderr({})
    if native.DEBUG_BUILD:
        assert "debug build" in stderr and "RuntimeWarning" in stderr, stderr
    else:
        assert stderr == ""


def test_the_debug_build_warning_can_be_silenced():
    assert _import_stderr({"FEEDSTOCK_ALLOW_DEBUG_BUILD": "1"}) == ""


def test_the_extension_is_built_on_the_stable_abi():
    # One wheel for every CPython from 3.11: the module's file name carries
    # the stable ABI's tag, not this interpreter's.
    assert native.__file__.endswith(".abi3.so"), native.__file__


PACKAGE = os.path.join(os.path.dirname(__file__), "..", "python", "feedstock")


def _run(args):
    env = dict(os.environ, FEEDSTOCK_ALLOW_DEBUG_BUILD="1")
    return subprocess.run(
        [sys.executable, "-m", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=os.path.join(PACKAGE, "..", ".."),
    )


def test_the_public_stubs_match_the_package():
    # stubtest imports the modules and compares every public name and
    # signature with its stub.
    done = _run(["mypy.stubtest", "feedstock.errors", "feedstock.pipeline"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_stub_type_checks():
    stubs = sorted(
        os.path.join(PACKAGE, f) for f in os.listdir(PACKAGE) if f.endswith(".pyi")
    )
    assert len(stubs) >= 3, stubs
    done = _run(["mypy", "--no-incremental", *stubs])
    assert done.returncode == 0, done.stdout + done.stderr
