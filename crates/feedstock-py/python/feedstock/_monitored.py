"""``tf.train.MonitoredSession`` and ``tf.train.MonitoredTrainingSession``
of TensorFlow 1, for input loops written around them, with
``tf.train.SessionRunHook`` and its run arguments.

As TensorFlow's: creating one runs the global and local variable
initializers, finalizes the graph and starts the queue runners of
``tf.GraphKeys.QUEUE_RUNNERS`` under a coordinator; ``run`` calls the
hooks around each run; ``OutOfRangeError`` (or ``StopIteration``) leaving
the ``with`` block ends it cleanly (the exception is swallowed); closing
stops and joins the threads and the graph is unfinalized again.

``checkpoint_dir`` saves and restores the input position and the global
step exactly (see ``_checkpoint``) when the graph's input is
deterministic, and is refused naming why otherwise; summaries are not
written (``summary_dir`` is refused). ``tf.train.Supervisor`` (without a
``logdir``) is here too.
"""

import collections
import contextlib

from . import _checkpoint, errors
from ._graph import (
    QUEUE_RUNNERS,
    Coordinator,
    Session,
    get_default_graph,
    global_variables_initializer,
    local_variables_initializer,
    start_queue_runners,
)


# Why a Supervisor's logdir is refused, and where checkpoints live.
_NO_SUPERVISOR_CHECKPOINT = (
    "feedstock writes no summaries and no model variables; the input position and global step of a "
    "deterministic graph are checkpointed by tf.train.MonitoredTrainingSession(checkpoint_dir=...), "
    f"and {_checkpoint._PIPELINE}"
)

# TensorFlow's marker for an argument left at its default.
USE_DEFAULT = object()


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook's ``before_run`` adds to a run."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """What a hook's ``after_run`` receives: the results of its fetches."""


class SessionRunContext:
    """The context of one run, given to hooks: ``request_stop`` makes the
    session's ``should_stop`` true after the run."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SessionRunHook:
    """``tf.train.SessionRunHook``: every method does nothing."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class Scaffold:
    """``tf.train.Scaffold``: the initializing operations (by default the
    global and local variable initializers)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, local_init_op=None, **_ignored):
        self.init_op = init_op
        self.init_feed_dict = init_feed_dict
        self.init_fn = init_fn
        self.local_init_op = local_init_op

    def finalize(self):
        if self.init_op is None:
            self.init_op = global_variables_initializer()
        if self.local_init_op is None:
            self.local_init_op = local_variables_initializer()
        get_default_graph().finalize()
        return self


class ChiefSessionCreator:
    """``tf.train.ChiefSessionCreator``: a session with the scaffold's
    initializers run, and with ``checkpoint_dir`` (or
    ``checkpoint_filename_with_path``) the global step and input position
    of the latest input checkpoint restored (the input resumes once the
    queue runners start). For a graph whose input cannot resume exactly,
    a warning says why, and only the global step is restored."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        if checkpoint_dir is not None or checkpoint_filename_with_path is not None:
            _checkpoint.warn_if_inexact(get_default_graph(), "MonitoredTrainingSession(checkpoint_dir=...)")
        self._scaffold = scaffold or Scaffold()
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_file = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        sess = Session(config=self._config)
        sess.run(self._scaffold.init_op, feed_dict=self._scaffold.init_feed_dict)
        if self._scaffold.init_fn is not None:
            self._scaffold.init_fn(self._scaffold, sess)
        sess.run(self._scaffold.local_init_op)
        if self._checkpoint_dir is not None or self._checkpoint_file is not None:
            try:
                _checkpoint.restore(sess, self._checkpoint_dir, self._checkpoint_file)
            except Exception:
                sess.close()
                raise
        return sess


class _MonitoredSession:
    """The session-like object both monitored sessions are."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        self._grace = stop_grace_period_secs
        for h in self._hooks:
            h.begin()
        try:
            self._tf_sess = (session_creator or ChiefSessionCreator()).create_session()
        except Exception:
            if not self._graph_was_finalized:
                self._graph._g.finalized = False
            raise
        # As TensorFlow's: no exception type is a clean stop here.
        self._coord = Coordinator(clean_stop_exception_types=[])
        if self._graph.get_collection(QUEUE_RUNNERS):
            start_queue_runners(sess=self._tf_sess, coord=self._coord)
        try:
            _checkpoint.replay(self._tf_sess)
        except Exception:
            self._coord.request_stop()
            self._tf_sess.close()
            if not self._graph_was_finalized:
                self._graph._g.finalized = False
            raise
        for h in self._hooks:
            h.after_create_session(self._tf_sess, self._coord)
        self._stop = False
        self._closed = False

    @property
    def graph(self):
        return None if self._closed else self._tf_sess.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """``Session.run`` with the hooks' ``before_run`` fetches and feeds
        added and their ``after_run`` called; an error a runner thread
        reported to the coordinator is raised in place of the run's."""
        if self._closed:
            # TensorFlow's own error here, its session being gone.
            raise AttributeError("'NoneType' object has no attribute 'run'")
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._tf_sess)
        hook_args = [h.before_run(context) for h in self._hooks]
        feeds = dict(feed_dict or {})
        for a in hook_args:
            if a is not None and a.feed_dict:
                overlap = set(feeds) & set(a.feed_dict)
                if overlap:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user. {overlap}")
                feeds.update(a.feed_dict)
        asking = [k for k, a in enumerate(hook_args) if a is not None and a.fetches is not None]
        extra = [hook_args[k].fetches for k in asking]
        try:
            results = self._tf_sess.run([fetches, extra], feed_dict=feeds or None, options=options)
        except Exception as original:
            try:
                self._coord.raise_requested_exception()
            except Exception:
                raise original from None
            raise
        got = dict(zip(asking, results[1]))
        for k, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(results=got.get(k), options=options, run_metadata=run_metadata))
        self._stop = self._stop or context.stop_requested
        return results[0]

    def should_stop(self):
        """Whether a hook or the coordinator asked to stop (an error a
        thread reported is raised here)."""
        if self._closed:
            return True
        self._coord.raise_requested_exception()
        return self._stop or self._coord.should_stop()

    def close(self):
        self._close(None)

    def _close(self, exception_type):
        if self._closed:
            raise RuntimeError("Session is already closed.")
        try:
            if not exception_type:
                for h in self._hooks:
                    h.end(self._tf_sess)
        finally:
            self._closed = True
            self._coord.request_stop()
            try:
                self._coord.join(stop_grace_period_secs=self._grace, ignore_live_threads=True)
            finally:
                self._tf_sess.close()
                if not self._graph_was_finalized:
                    self._graph._g.finalized = False

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close(exception_type)
        return exception_type is None


class MonitoredSession(_MonitoredSession):
    """``tf.train.MonitoredSession``."""


class SingularMonitoredSession(_MonitoredSession):
    """``tf.train.SingularMonitoredSession``: its ``raw_session`` is the
    plain session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None, **_ignored):
    """``tf.train.MonitoredTrainingSession``.

    With ``checkpoint_dir`` (as TensorFlow 2.21's): on creation the latest
    checkpoint there is restored; the chief saves one when the session is
    created, every ``save_checkpoint_steps`` global steps or
    ``save_checkpoint_secs`` seconds (600 when neither is given; the
    seconds when both are; none when both are ``None``) and at close. A
    global step is required (RuntimeError, as TensorFlow). What is saved is
    the global step and, for a graph whose input is deterministic, the
    input position, which a restart resumes exactly; for another graph a
    warning names why (thread counts, unseeded ops), and a restart reads
    the input from its start, as TensorFlow's does. ``summary_dir`` is
    accepted and nothing is written there (feedstock writes no event
    files)."""
    all_hooks = list(hooks or []) + (list(chief_only_hooks or []) if is_chief else [])
    if checkpoint_dir is None:
        creator = ChiefSessionCreator(scaffold=scaffold, config=config)
    else:
        graph = get_default_graph()
        if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
            save_checkpoint_secs, save_checkpoint_steps = 600, None
        elif save_checkpoint_secs is USE_DEFAULT:
            save_checkpoint_secs = None
        elif save_checkpoint_steps is USE_DEFAULT:
            save_checkpoint_steps = None
        if is_chief and (save_checkpoint_secs or save_checkpoint_steps):
            if _checkpoint._global_step(graph) is None:
                raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
            all_hooks.append(_checkpoint.CheckpointSaverHook(
                checkpoint_dir, save_secs=save_checkpoint_secs,
                save_steps=None if save_checkpoint_secs else save_checkpoint_steps))
        creator = ChiefSessionCreator(scaffold=scaffold, config=config, checkpoint_dir=checkpoint_dir)
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)


class Supervisor:
    """``tf.train.Supervisor`` without a ``logdir`` (feedstock writes no
    checkpoints or summaries: NotImplementedError with one).

    As TensorFlow's: the graph is finalized at once; ``managed_session``
    (and ``prepare_or_wait_for_session``) runs the variable initializers
    and starts the queue runners under ``sv.coord``; an
    ``OutOfRangeError`` leaving ``managed_session``'s block is a clean
    stop, another exception is re-raised when the threads are joined.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=0, ready_for_local_init_op=0, is_chief=True, init_op=0,
                 init_feed_dict=None, local_init_op=0, logdir=None, summary_op=0, saver=0, global_step=0,
                 save_summaries_secs=120, save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None, summary_writer=0, init_fn=None,
                 local_init_run_options=None):
        if logdir is not None:
            raise NotImplementedError(f"tf.train.Supervisor with a logdir writes no checkpoints or summaries: {_NO_SUPERVISOR_CHECKPOINT}")
        self._graph = graph or get_default_graph()
        with self._graph.as_default():
            self._init_op = global_variables_initializer() if init_op == Supervisor.USE_DEFAULT else init_op
            self._local_init_op = (
                local_variables_initializer() if local_init_op == Supervisor.USE_DEFAULT else local_init_op
            )
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._grace = stop_grace_secs
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._started_threads = []
        self._graph.finalize()

    @property
    def coord(self):
        return self._coord

    @property
    def is_chief(self):
        return self._is_chief

    @property
    def init_op(self):
        return self._init_op

    @property
    def summary_writer(self):
        return None

    @property
    def saver(self):
        return None

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """A session with the initializers run and the queue runners
        started."""
        self._coord.clear_stop()
        sess = Session(graph=self._graph, config=config)
        if self._init_op is not None:
            sess.run(self._init_op, feed_dict=self._init_feed_dict)
        if self._init_fn is not None:
            self._init_fn(sess)
        if self._local_init_op is not None:
            sess.run(self._local_init_op)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the graph's queue runners under ``sv.coord``."""
        with self._graph.as_default():
            threads = start_queue_runners(sess=sess, coord=self._coord)
        self._started_threads.extend(threads)
        return threads

    def should_stop(self):
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Requests a stop and joins the threads (re-raising an error one
        reported)."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._grace, ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Runs ``target`` every ``timer_interval_secs`` in a looper
        thread of ``sv.coord``."""
        from ._graph import LooperThread

        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    sess.close()
