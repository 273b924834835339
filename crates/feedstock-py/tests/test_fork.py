"""A forked child touching a pipeline its parent started gets an error,
not a hang (the runner threads did not survive the fork); one built in
the child works."""

import os
import signal
import time

import numpy as np
import pytest

import feedstock as fs
from feedstock import errors
from feedstock.compat import v1 as tf

ROWS = 10_000


def in_forked_child(touch, timeout=30):
    """Runs ``touch`` in a forked child; returns its exit code: 0 if it
    returned, 10 if it raised the fork error, 11 for another
    FailedPreconditionError, 12 for another exception. A child still
    running after ``timeout`` seconds is killed and the test fails."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 12
        try:
            touch()
            code = 0
        except errors.FailedPreconditionError as e:
            said = str(e)
            code = 10 if f"started in process {parent}" in said and "forked child" in said else 11
        except BaseException:  # noqa: BLE001 - reported by the exit code
            code = 12
        os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child was still running after {timeout} s (killed)")


def arrays():
    return {"x": np.arange(ROWS, dtype=np.int64)}


def test_a_started_pipeline_used_in_a_forked_child_raises():
    pipe = fs.Pipeline(arrays=arrays(), batch_size=10, num_epochs=1, shuffle=False)
    it = iter(pipe)
    assert next(it)["x"].tolist() == list(range(10))

    def read_everything():
        # More batches than the queue holds: without the check the child
        # would read what is queued, then wait for ever.
        for _ in pipe:
            pass

    assert in_forked_child(read_everything) == 10
    assert in_forked_child(lambda: pipe.stats) == 10
    # The parent's pipeline is untouched.
    assert next(it)["x"].tolist() == list(range(10, 20))
    it.close()


def test_queue_runners_and_coordinator_used_in_a_forked_child_raise():
    q = tf.train.range_input_producer(ROWS, shuffle=False, num_epochs=1)
    x = q.dequeue()
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        assert s.run(x) == 0

        def drain():
            while True:
                s.run(x)

        assert in_forked_child(drain) == 10
        assert in_forked_child(lambda: coord.join(threads)) == 10
        # A stop request in the child has nothing to stop: no error, and
        # the parent's threads run on.
        assert in_forked_child(coord.request_stop) == 0
        assert s.run(x) == 1
        coord.request_stop()
        coord.join(threads)


def test_a_pipeline_built_in_the_forked_child_works():
    started = fs.Pipeline(arrays=arrays(), batch_size=10, num_epochs=1, shuffle=False)
    it = iter(started)
    next(it)

    def build_and_read():
        pipe = fs.Pipeline(arrays={"x": np.arange(25, dtype=np.int64)}, batch_size=10, num_epochs=1, shuffle=False)
        got = [b["x"].tolist() for b in pipe]
        if got != [list(range(10)), list(range(10, 20)), list(range(20, 25))]:
            raise AssertionError(got)

    assert in_forked_child(build_and_read) == 0
    it.close()
