"""TensorFlow 1's stock session-run hooks an input loop uses with
``tf.train.MonitoredSession`` / ``MonitoredTrainingSession``
(``StopAtStepHook``, ``NanTensorHook``, ``LoggingTensorHook``), and the
global step ``StopAtStepHook`` counts.

Each behaves as TensorFlow 2.21's ``tf.compat.v1.train`` one was observed
to: the same arguments, errors, log lines (on the ``tensorflow`` logger)
and stopping step. The global step is a variable the program increments
itself (``tf.assign_add(global_step, 1)`` in the run; an optimizer's
``minimize(global_step=...)`` in TensorFlow).
"""

import time

import numpy as np

from . import _app
from ._graph import GLOBAL_STEP, Tensor, Variable, constant, get_default_graph, int64
from ._monitored import SessionRunArgs, SessionRunHook

_GLOBAL_STEP_READ = "global_step_read_op_cache"


def get_global_step(graph=None):
    """``tf.train.get_global_step``: the graph's global step variable, or
    ``None``."""
    found = (graph or get_default_graph()).get_collection(GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("There are multiple items in collection global_step. Please check that there is only one.")
    return found[0] if found else None


def create_global_step(graph=None):
    """``tf.train.create_global_step``: an int64 scalar variable
    ``global_step`` starting at 0, not trainable, in the global variables
    and ``GLOBAL_STEP`` collections; ``ValueError`` if there is one."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default():
        step = Variable(constant(0, dtype=int64), trainable=False, name="global_step")
    graph.add_to_collection(GLOBAL_STEP, step)
    return step


def get_or_create_global_step(graph=None):
    """``tf.train.get_or_create_global_step``."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return create_global_step(graph) if step is None else step


def global_step(sess, global_step_tensor):
    """``tf.train.global_step``: the step's value as a Python int."""
    return int(sess.run(global_step_tensor))


def _global_step_read(graph=None):
    """TensorFlow's ``_get_or_create_global_step_read``: a tensor reading
    the global step (its value before the run's own assignments), made
    once per graph; ``None`` without a global step."""
    graph = graph or get_default_graph()
    cached = graph.get_collection(_GLOBAL_STEP_READ)
    if cached:
        return cached[0]
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default():
        read = step + 0
    graph.add_to_collection(_GLOBAL_STEP_READ, read)
    return read


class StopAtStepHook(SessionRunHook):
    """``tf.train.StopAtStepHook``: requests a stop once the global step
    reaches ``last_step`` (or ``num_steps`` past its value when the
    session is created). Needs a global step (``RuntimeError`` in
    ``begin`` otherwise, as TensorFlow); a step nothing increments never
    stops."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The step read in the run is the value before it; the run may
        # have incremented it: check the value now before stopping.
        if run_values.results + 1 >= self._last_step:
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    """``tf.train.NanLossDuringTrainingError``."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """``tf.train.NanTensorHook``: fetches ``loss_tensor`` with every run;
    a NaN logs "Model diverged with loss = NaN." and raises
    :class:`NanLossDuringTrainingError` (``fail_on_nan_loss``) or requests
    a stop. The loss is a scalar (numpy's error for an array, as
    TensorFlow's)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _app.error(failure_message)
                raise NanLossDuringTrainingError
            _app.warning(failure_message)
            run_context.request_stop()


class SecondOrStepTimer:
    """``tf.train.SecondOrStepTimer``: triggers on the first step, then
    every ``every_steps`` steps or once ``every_secs`` seconds passed."""

    def __init__(self, every_secs=None, every_steps=None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; the seconds and steps since the
        last one (``None`` the first time)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class _NeverTriggerTimer(SecondOrStepTimer):
    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step):
        return False


class LoggingTensorHook(SessionRunHook):
    """``tf.train.LoggingTensorHook``: logs ``tensors`` (a dict tag ->
    tensor or name, or a list of them, each its own tag) at INFO on the
    ``tensorflow`` logger, on the first run and every ``every_n_iter``
    runs or ``every_n_secs`` seconds, and at the end with ``at_end``:
    ``"tag = value, ..."`` (dict tags sorted, numpy's suppressed
    printing) followed by ``" (0.123 sec)"`` since the last line, or
    ``formatter(dict of values)``."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = tensors
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (_NeverTriggerTimer() if only_at_end
                       else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        graph = get_default_graph()
        self._current_tensors = {
            tag: t if isinstance(t, Tensor) else graph.as_graph_element(t) for tag, t in self._tensors.items()
        }

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values):
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                _app.info(self._formatter(tensor_values))
            else:
                stats = ", ".join("%s = %s" % (tag, tensor_values[tag]) for tag in self._tag_order)
                if elapsed_secs is not None:
                    _app.info("%s (%.3f sec)", stats, elapsed_secs)
                else:
                    _app.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))
