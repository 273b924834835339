"""Input checkpoints of the queue-runner graph: what
``MonitoredTrainingSession(checkpoint_dir=...)`` saves and restores.

A graph whose input is deterministic (every batching stage and queue
runner one thread, every shuffle and random op seeded) delivers the same
batches in the same order on every run. A checkpoint then holds the input
position (how many batches, dequeues and reads the program's runs took, by
node; counted by the native session) and the global step. Restoring makes
those steps again in a new session of the same graph, dropping what they
give, and sets the global step: the batches after the restore are the ones
an uninterrupted run delivers after that point. Any other graph (threads
that interleave, unseeded shuffles) cannot be resumed exactly: its
checkpoints hold the global step alone, a warning names the reasons when
the session is built, and a restart reads the input from its start, as
TensorFlow's does — never an approximate resume.

The files are feedstock's own (JSON): ``input.ckpt-<step>.json`` and the
index ``input_checkpoint`` naming the latest, written atomically. They hold
no model variables (feedstock holds no model).
"""

import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np

from . import errors
from ._gfile import write_atomic
from ._graph import GLOBAL_STEP

_FORMAT = "feedstock-input-checkpoint"
_VERSION = 1
_INDEX = "input_checkpoint"
# As TensorFlow's Saver: the five most recent checkpoints are kept.
_MAX_TO_KEEP = 5

# Where an input that resumes exactly without these conditions lives.
_PIPELINE = ("an input that stops and resumes exactly whatever its threads is feedstock.Pipeline: "
             "save feedstock.Pipeline.state_dict() with your checkpoint")


def _global_step(graph):
    found = graph.get_collection(GLOBAL_STEP)
    return found[0] if len(found) == 1 else None


def exact(graph):
    """Whether ``graph``'s input position can be saved (its input is the
    same on every run)."""
    return not graph._g.native.input_nondeterminism()


def _caller_level():
    """The ``stacklevel`` that points a warning raised in this package at
    the first caller outside it (the user's line), however deep the
    package's own calls were."""
    package = os.path.dirname(__file__)
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_if_inexact(graph, what):
    """Warns, naming the reasons, when ``graph``'s input position cannot
    be saved: its checkpoints then hold the global step alone."""
    why = graph._g.native.input_nondeterminism()
    if why:
        warnings.warn(
            f"{what}: the input position of this graph is not saved, because its input differs from run to run: "
            f"{'; '.join(why)}. Its checkpoints hold the global step, and a restart reads the input from its "
            f"start, as TensorFlow's does. An exact resume needs batching stages and queue runners of one "
            f"thread each, and seeds on shuffles and random ops; {_PIPELINE}",
            stacklevel=_caller_level())


def fingerprint(graph):
    """A hash of the graph's input: producers (file lists), readers,
    queues, batching stages (batch sizes), seeds."""
    return hashlib.sha256(graph._g.native.input_fingerprint().encode()).hexdigest()


def latest_checkpoint(checkpoint_dir):
    """The path of the latest input checkpoint in ``checkpoint_dir``, or
    ``None``."""
    try:
        with open(os.path.join(checkpoint_dir, _INDEX)) as f:
            index = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"{os.path.join(checkpoint_dir, _INDEX)}: not a feedstock input checkpoint index ({e})")
    return os.path.join(checkpoint_dir, index["latest"])


def save(sess, checkpoint_dir, step):
    """Writes the global step ``step`` and, if the graph's input is
    :func:`exact`, the input position of ``sess`` as
    ``input.ckpt-<step>.json``, then points the index at it; keeps the
    five most recent."""
    os.makedirs(checkpoint_dir, exist_ok=True)
    name = f"input.ckpt-{step}.json"
    body = {
        "format": _FORMAT,
        "version": _VERSION,
        "global_step": step,
        "fingerprint": fingerprint(sess.graph),
        "input_position": _input_position(sess),
    }
    write_atomic(os.path.join(checkpoint_dir, name), json.dumps(body, indent=1).encode())
    index_path = os.path.join(checkpoint_dir, _INDEX)
    try:
        with open(index_path) as f:
            kept = json.load(f).get("all", [])
    except (OSError, ValueError):
        kept = []
    kept = [k for k in kept if k != name] + [name]
    for old in kept[:-_MAX_TO_KEEP]:
        try:
            os.remove(os.path.join(checkpoint_dir, old))
        except FileNotFoundError:
            pass
    kept = kept[-_MAX_TO_KEEP:]
    write_atomic(index_path, json.dumps({"latest": name, "all": kept}).encode())
    return os.path.join(checkpoint_dir, name)


def _input_position(sess):
    """The input position of ``sess`` as saved, or None (with a warning)
    when the graph's input is not :func:`exact` or the program's runs
    made it one a replay could not repeat (two nodes it runs taking from
    one queue or reader)."""
    if not exact(sess.graph):
        return None
    try:
        return [[n, k] for n, k in sess._s.input_position()]
    except errors.FailedPreconditionError as e:
        warnings.warn(f"the input position is not saved, only the global step: {e.message}",
                      stacklevel=_caller_level())
        return None


def load(path, graph):
    """The checkpoint at ``path``, checked against ``graph``: ValueError
    when it is not an input checkpoint, or holds the input position of
    another input."""
    try:
        with open(path) as f:
            body = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a feedstock input checkpoint ({e})") from None
    if not isinstance(body, dict) or body.get("format") != _FORMAT or body.get("version") != _VERSION:
        raise ValueError(f"{path}: not a feedstock input checkpoint (format {_FORMAT} version {_VERSION})")
    if body["input_position"] is not None and body["fingerprint"] != fingerprint(graph):
        raise ValueError(
            f"{path} was saved from another input (other files, seeds, batch sizes or graph): it cannot resume "
            f"this graph's input, which would not deliver the batches an uninterrupted run does; use a new "
            f"checkpoint_dir, or build the graph as the one that saved it")
    return body


def restore(sess, checkpoint_dir=None, checkpoint_filename_with_path=None):
    """Sets the global step from the latest checkpoint (or the given
    file) and leaves its input position, if it has one and the graph's
    input is :func:`exact`, on ``sess`` for :func:`replay` once the queue
    runners run. Nothing without a checkpoint."""
    path = checkpoint_filename_with_path or latest_checkpoint(checkpoint_dir)
    if path is None:
        return None
    body = load(path, sess.graph)
    step = _global_step(sess.graph)
    if step is not None:
        sess.run(step.initializer, feed_dict={step.initial_value: np.asarray(body["global_step"], step.dtype.as_numpy_dtype)})
    if body["input_position"] is not None and exact(sess.graph):
        sess._pending_input_position = [(n, int(k)) for n, k in body["input_position"]]
    return body


def replay(sess):
    """Resumes the input at the position :func:`restore` left (after the
    queue runners start): the native session makes those steps again."""
    position = getattr(sess, "_pending_input_position", None)
    if position:
        sess._pending_input_position = None
        sess._s.replay_input(position)


class CheckpointSaverHook:
    """Saves input checkpoints as TensorFlow's ``CheckpointSaverHook``
    saves model ones: when the session is created, every ``save_steps``
    global steps or ``save_secs`` seconds, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None):
        self._dir = checkpoint_dir
        self._secs = save_secs
        self._steps = save_steps
        self._last_step = None
        self._last_time = None
        self._step = None

    def begin(self):
        from ._graph import get_default_graph

        self._step = _global_step(get_default_graph())
        if self._step is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")

    def _save(self, sess, step):
        save(sess, self._dir, step)
        self._last_step = step
        self._last_time = time.monotonic()

    def after_create_session(self, session, coord):
        self._save(session, int(session.run(self._step)))

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        sess = run_context.session
        step = int(sess.run(self._step))
        if step == self._last_step:
            return
        if self._secs is not None:
            due = time.monotonic() - self._last_time >= self._secs
        else:
            due = step >= self._last_step + self._steps
        if due:
            self._save(sess, step)

    def end(self, session):
        step = int(session.run(self._step))
        if step != self._last_step:
            self._save(session, step)
