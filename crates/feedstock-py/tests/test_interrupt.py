"""Ctrl-C in a Python loop that waits on the pipeline.

Each test runs a child Python process whose main thread blocks in a
wait that never ends on its own (a batch that never fills), sends it
SIGINT once that thread is asleep in the wait, and checks that the child
raised ``KeyboardInterrupt`` out of the wait, that its ``finally`` (the
guide's ``coord.request_stop()`` / ``coord.join(threads)``, or the
pipeline's context manager) joined every runner thread, and that the
process then exited. The ``communicate`` timeout is a guard against a
hang, not a timing assertion.
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

# The child's prelude: a graph whose batching stages never fill (every
# example is filtered out by keep_input=False), over an endless producer.
PRELUDE = """
import sys
import numpy as np
import feedstock as fs
import feedstock.compat.v1 as tf

def never(n):
    [row] = tf.train.slice_input_producer([np.arange(4)], shuffle=False)
    return [tf.train.maybe_batch([row], keep_input=False, batch_size=2) for _ in range(n)]
"""

# The guide's loop: the run waits on `fetch`; the finally stops and joins.
GUIDE_LOOP = """
fetch = FETCH
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(coord=coord)
    try:
        print("ready", flush=True)
        while not coord.should_stop():
            sess.run(fetch)
    finally:
        coord.request_stop()
        coord.join(threads)
        alive = [t.name for t in threads if t.is_alive()]
        print("joined", len(threads), "alive", alive, flush=True)
"""

CASES = {
    # One waiting node.
    "one_batch": PRELUDE + GUIDE_LOOP.replace("FETCH", "never(1)[0]"),
    # Two batching stages waited on in one run.
    "two_batches": PRELUDE + GUIDE_LOOP.replace("FETCH", "never(2)"),
    # The Pythonic iterator: its batching stage waits on a runner that
    # itself waits on an inner batch that never fills.
    "pipeline_iterator": PRELUDE
    + """
def blocked(ex):
    inner = tf.train.maybe_batch([ex["x"]], keep_input=False, batch_size=1)
    return {"x": tf.reshape(inner, [])}

pipe = fs.Pipeline(arrays={"x": np.arange(8)}, map=blocked, batch_size=2, num_epochs=None, shuffle=False)
try:
    with pipe:
        print("ready", flush=True)
        for batch in pipe:
            pass
finally:
    alive = [t.name for t in pipe._threads if t.is_alive()]
    print("joined", "stopped" if pipe._session is None else "running", "alive", alive, flush=True)
""",
}


def _sleeping(pid):
    """Whether the child's main thread is asleep (state S): blocked in
    the native wait, not running Python."""
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        state = f.read().rsplit(")", 1)[1].split()[0]
    return state == "S"


def _default_sigint():
    """In the child before Python starts: Ctrl-C's default action.

    A shell starts a background job (``.ci/run &``, ``nohup``) with SIGINT
    ignored, and the child inherits that; Python then installs no
    KeyboardInterrupt handler and the signal does nothing, so the child
    would wait for ever. An interactive program has the default, which
    is what these tests are about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(script):
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        line = p.stdout.readline()
        assert line.strip() == "ready", line + p.stderr.read()
        # Wait (by polling the kernel's view, bounded) until the main
        # thread sleeps in the wait, so that the signal lands there.
        for _ in range(100_000):
            if _sleeping(p.pid):
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("case", sorted(CASES))
def test_ctrl_c_stops_the_loop_and_joins_the_threads(case):
    code, out, err = _interrupt(CASES[case])
    # KeyboardInterrupt propagated out of the loop: Python's exit code
    # for it is 1 with the traceback on stderr... or -SIGINT when the
    # interpreter re-raises the signal at exit (3.8+ does for an
    # unhandled KeyboardInterrupt).
    assert code in (1, -signal.SIGINT), (code, out, err)
    assert "KeyboardInterrupt" in err, err
    last = out.split("\n")[-2]
    if case == "pipeline_iterator":
        assert last == "joined stopped alive []", out
    else:
        words = last.split(" ", 3)
        assert words[0] == "joined" and int(words[1]) > 0 and words[2:] == ["alive", "[]"], out


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_ctrl_c_without_cleanup_still_exits():
    """A loop with no ``finally``: the interpreter exits on the
    KeyboardInterrupt although the runner threads were never joined (the
    session's last handle closes its queues)."""
    script = PRELUDE + """
fetch = never(2)
sess = tf.Session()
threads = tf.train.start_queue_runners(sess=sess, coord=tf.train.Coordinator())
print("ready", flush=True)
sess.run(fetch)
"""
    code, _, err = _interrupt(script)
    assert code in (1, -signal.SIGINT), (code, err)
    assert "KeyboardInterrupt" in err, err
