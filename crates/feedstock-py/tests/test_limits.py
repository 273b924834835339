"""feedstock's own answers at the edges (issue 33, items 6 and 10): an
output memory cannot hold is a ``MemoryError`` (also TensorFlow's
``ResourceExhaustedError``), never an abort, and ``Pipeline`` refuses
arguments that are not counts."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import feedstock as fs
from feedstock import errors


def child(body, limit_bytes=None):
    """Runs ``body`` in a new interpreter (with its address space limited
    to ``limit_bytes``), so that an abort fails the test instead of
    killing pytest; its exit status and output."""
    head = "import resource\n"
    if limit_bytes is not None:
        head += f"resource.setrlimit(resource.RLIMIT_AS, ({limit_bytes}, {limit_bytes}))\n"
    head += "import feedstock.compat.v1 as tf\n"
    return subprocess.run(
        [sys.executable, "-c", head + textwrap.dedent(body)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "expr",
    [
        "tf.one_hot(tf.zeros([2**20], tf.int32), 2**20)",
        "tf.tile(tf.constant([1.0]), [2**40])",
        "tf.tile([[1.0]], [2**20, 2**20])",
        "tf.tile(tf.constant(['x']), [2**40])",
        "tf.fill([2**40], 1.0)",
        "tf.zeros([2**20, 1]) + tf.zeros([1, 2**20])",
    ],
)
@pytest.mark.parametrize("limit", [None, 2 << 30])
def test_an_output_memory_cannot_hold_is_a_memory_error(expr, limit):
    done = child(
        f"""
        t = {expr}
        try:
            with tf.Session() as s:
                s.run(t)
        except MemoryError as e:
            assert isinstance(e, tf.errors.ResourceExhaustedError), type(e).__mro__
            print("caught", e.message)
        """,
        limit,
    )
    assert done.returncode == 0, done
    assert "caught" in done.stdout and "OOM when allocating tensor with shape[" in done.stdout, done


def test_the_calls_of_the_issue_end_cleanly():
    # One interpreter for the three: none aborts it.
    done = child(
        """
        import numpy as np
        print(tf.Session().run(tf.one_hot([1], 2**40)).shape)
        for t in (tf.tile(tf.constant([1.0]), [2**40]), tf.tile([[1.0]], [2**20, 2**20])):
            try:
                tf.Session().run(t)
            except MemoryError:
                print("MemoryError")
        """
    )
    assert done.returncode == 0, done
    assert done.stdout.split() == ["(1,", "0)", "MemoryError", "MemoryError"], done


def test_a_memory_error_reaches_the_batch_loop(tmp_path):
    # A map whose output memory cannot hold, in a Pipeline: the
    # exception the loop sees is a MemoryError.
    done = child(
        """
        import feedstock as fs
        import numpy as np
        p = fs.Pipeline(arrays={"x": np.arange(4, dtype=np.int64)}, batch_size=2, shuffle=False,
                        map=lambda ex: {"x": tf.tile(tf.reshape(ex["x"], [1]), [2**40])})
        try:
            for _ in p:
                pass
        except MemoryError as e:
            print("caught", type(e).__name__)
        """
    )
    assert done.returncode == 0, done
    assert "caught" in done.stdout, done


def arrays():
    return {"x": np.arange(4, dtype=np.int64)}


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"batch_size": 2.5}, TypeError, "batch_size must be an integer, got 2.5"),
        ({"batch_size": "2"}, TypeError, "batch_size must be an integer"),
        ({"batch_size": True}, TypeError, "batch_size must be an integer, got True"),
        ({"batch_size": 0}, ValueError, "batch_size must be at least 1, got 0"),
        ({"shuffle_buffer": -5}, ValueError, "shuffle_buffer must be at least 0, got -5"),
        ({"shuffle_buffer": 1.5}, TypeError, "shuffle_buffer must be an integer"),
        ({"num_epochs": "2"}, TypeError, "num_epochs must be an integer or None, got '2'"),
        ({"num_epochs": 2.0}, TypeError, "num_epochs must be an integer or None"),
        ({"num_epochs": False}, TypeError, "num_epochs must be an integer or None"),
        ({"num_epochs": 0}, ValueError, "num_epochs must be at least 1, got 0"),
        ({"num_threads": 0}, ValueError, "num_threads must be at least 1, got 0"),
        ({"num_threads": 1.5}, TypeError, "num_threads must be an integer"),
        ({"capacity": -1}, ValueError, "capacity must be at least 1, got -1"),
    ],
)
def test_pipeline_refuses_arguments_that_are_not_counts(kwargs, exc, words):
    with pytest.raises(exc) as info:
        fs.Pipeline(arrays=arrays(), **kwargs)
    assert words in str(info.value)


def test_pipeline_takes_numpy_integers_and_none():
    p = fs.Pipeline(arrays=arrays(), batch_size=np.int64(2), num_epochs=None, shuffle=False, shuffle_buffer=np.int32(0))
    assert p.batch_size == 2 and type(p.batch_size) is int
    it = iter(p)
    assert [next(it)["x"].tolist() for _ in range(3)] == [[0, 1], [2, 3], [0, 1]]
    p.stop()
