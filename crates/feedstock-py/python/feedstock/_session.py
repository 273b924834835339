"""TensorFlow 1's Session, Coordinator and queue runners over the native
graph."""

from . import _native
from . import errors
from ._types import SparseTensorValue
from ._config import RunOptions, run_timeout  # noqa: F401 (RunOptions: re-exported)
import contextlib
import numpy as np
import sys
import threading
import time
import warnings

from ._graph import (
    Operation,
    QUEUE_RUNNERS,
    Tensor,
    Variable,
    _compatible,
    get_default_graph,
)


# ---------------------------------------------------------------- sessions


class _SessionStack(threading.local):
    def __init__(self):
        self.stack = []


_session_stack = _SessionStack()


def _default_session():
    if not _session_stack.stack:
        raise ValueError(
            "Cannot evaluate tensor using `eval()`: No default session is registered. "
            "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`"
        )
    return _session_stack.stack[-1]


def get_default_session():
    return _session_stack.stack[-1] if _session_stack.stack else None


def _flatten(graph, fetches, leaves):
    """The structure of ``fetches`` with each leaf replaced by its index
    in ``leaves``; leaves are tensors and operations of ``graph`` (or
    their names), refused as TensorFlow refuses them."""
    if fetches is None:
        raise TypeError(f'Argument `fetch` = None has invalid type "NoneType". Cannot be None')
    if isinstance(fetches, dict):
        return ("dict", type(fetches), [(k, _flatten(graph, v, leaves)) for k, v in fetches.items()])
    if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
        return ("namedtuple", type(fetches), [_flatten(graph, v, leaves) for v in fetches])
    if isinstance(fetches, (list, tuple)):
        return ("seq", type(fetches), [_flatten(graph, v, leaves) for v in fetches])
    leaves.append(_fetch_element(graph, fetches))
    return ("leaf", len(leaves) - 1)


def _fetch_element(graph, fetch):
    """A fetch leaf as an element of ``graph``: TypeError for what is
    no tensor, operation or name, ValueError for an element of another
    graph or an unknown name (TensorFlow's messages)."""
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except TypeError as e:
        raise TypeError(
            f'Argument `fetch` = {fetch} has invalid type "{type(fetch).__name__}" must be a string or Tensor. ({e})'
        ) from None
    except (ValueError, KeyError) as e:
        raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. ({e.args[0]})") from None


def _feed_key(graph, key):
    """A ``feed_dict`` key as a tensor of ``graph`` (a tensor, or its
    ``"<op>:<index>"`` name); TypeError otherwise, as in TensorFlow."""
    try:
        t = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except Exception as e:  # noqa: BLE001 (TensorFlow turns every refusal into this TypeError)
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") from None
    return Tensor(t.graph, t._o) if isinstance(t, Variable) else t


def _feed_value(t, key, value):
    """``value`` fed for tensor ``t`` as the array TensorFlow feeds:
    converted to ``t``'s numpy type as ``np.asarray(value).astype``
    (wrapping, NaN to integers as numpy casts it); a Python int that
    does not survive the conversion, or a tensor, is a TypeError; a shape
    incompatible with ``t``'s static one a ValueError."""
    if isinstance(value, Tensor):
        raise TypeError(
            "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
            f"strings, lists, numpy ndarrays, or TensorHandles. For reference, the tensor object was {value} "
            f"which was passed to the argument `feed_dict` with key {key}."
        )
    if isinstance(value, SparseTensorValue):
        raise TypeError("feeding a SparseTensorValue is not supported")
    np_type = t.dtype.as_numpy_dtype
    if isinstance(value, int) and _feed_int(np_type, value) != value:
        raise TypeError(
            f"Type of feed value {value} with type {type(value)} is not compatible with Tensor type {np_type}. "
            "Try explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
        )
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if np.issubdtype(np_type, np.number):
            arr = np.asarray(value).astype(np_type, copy=False)
        else:
            arr = np.asarray(value, dtype=np_type)
    if not _compatible(t.shape._dims, list(arr.shape)):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor {t.name}, which has shape {t.shape}")
    return arr


def _check_strings(arr):
    """A fed string array holds only ``bytes`` and ``str``: else
    ``InternalError``, as TensorFlow's run fails."""
    if arr.dtype != object:
        return
    for x in arr.reshape(-1):
        if not isinstance(x, (bytes, str)):
            kind = type(x)
            module = "numpy." if kind.__module__ == "numpy" else ""
            raise errors.InternalError(
                None, None, f"Graph execution error:\n\nUnsupported object type {module}{kind.__name__}"
            )


def _feed_int(np_type, value):
    """A Python int as TensorFlow checks it fits a feed of ``np_type``
    (``str`` of it for strings)."""
    if np_type is object:
        return str(value)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np_type(np.array(value).astype(np_type))


def _rebuild(spec, values):
    kind = spec[0]
    if kind == "leaf":
        return values[spec[1]]
    if kind == "dict":
        out = spec[1]() if spec[1] is not dict else {}
        for k, v in spec[2]:
            out[k] = _rebuild(v, values)
        return out
    if kind == "namedtuple":
        return spec[1](*[_rebuild(v, values) for v in spec[2]])
    items = [_rebuild(v, values) for v in spec[2]]
    return items if spec[1] is list else spec[1](items)


def _scalarize(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


class Session:
    """``tf.Session``: runs a graph.

    ``run`` returns numpy arrays (strings as object arrays of ``bytes``;
    scalars as numpy scalars, or ``bytes``) and ``SparseTensorValue`` for
    sparse tensors, in the structure of the fetches. The GIL is released
    while it waits; Ctrl-C raises ``KeyboardInterrupt`` within a fraction
    of a second (the guide's ``finally: coord.request_stop()`` then stops
    the queue runners).
    """

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph or get_default_graph()
        self._s = _native.Session(self.graph._g.native)
        self._config = config
        self._closed = False
        self._ctx = None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of ``fetches`` (any structure of tensors,
        operations and their names), with ``feed_dict``'s values fed.

        As TensorFlow: a closed session, or an empty graph, is a
        RuntimeError; a fetched tensor that is fed gives the fed array."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self.graph._is_empty():
            raise RuntimeError("The Session graph is empty. Add operations to the graph before calling run().")
        fed = {}
        for key, value in (feed_dict or {}).items():
            t = _feed_key(self.graph, key)
            fed[t._o] = _feed_value(t, key, value)
        leaves = []
        spec = _flatten(self.graph, fetches, leaves)
        native_fetches, index = [], {}
        for leaf in leaves:
            if isinstance(leaf, _SummaryFetch):
                continue
            tensors = leaf.inputs if isinstance(leaf, Operation) else [leaf]
            for t in tensors:
                if t._o not in index and t._o not in fed:
                    index[t._o] = len(native_fetches)
                    native_fetches.append(t._o)
        timeout = run_timeout(options, self._config)
        values = []
        if native_fetches:
            # As TensorFlow: nothing runs when every fetch is fed.
            for arr in fed.values():
                _check_strings(arr)
            values = self._s.run(native_fetches, list(fed.items()), timeout)
        out = []
        for leaf in leaves:
            if isinstance(leaf, _SummaryFetch):
                out.append(dict(self._s.queue_summaries()))
            elif isinstance(leaf, Operation):
                out.append(None)
            elif leaf._o in fed:
                out.append(fed[leaf._o])
            else:
                out.append(_scalarize(values[index[leaf._o]]))
        return _rebuild(spec, out)

    def close(self):
        """Closes the session: blocked runs return ``CancelledError`` and
        queue runners stop."""
        self._closed = True
        self._s.close()

    def queue_summaries(self):
        """``{tag: fraction}``: how full each queue is, tagged as
        TensorFlow's summaries (``queue/<name>/fraction_of_<cap>_full``)."""
        return dict(self._s.queue_summaries())

    def stats(self):
        """One dict of counters per queue (size, capacity, enqueued,
        dequeued, batches, held_back, filtered, ...)."""
        return self._s.stats()

    def shard_stats(self):
        """One dict per sharded producer (name, dropped, padded): what
        its remainder policy dropped or padded."""
        return self._s.shard_stats()

    def skip_stats(self):
        """The damaged TFRecord regions the readers skipped (readers made
        with ``skip_corrupt``): ``{"skipped", "skipped_bytes", "files"}``,
        ``files`` one dict per file (``file``, ``skipped``,
        ``skipped_bytes``)."""
        return self._s.skip_stats()

    @contextlib.contextmanager
    def as_default(self):
        _session_stack.stack.append(self)
        try:
            yield self
        finally:
            _session_stack.stack.remove(self)

    def __enter__(self):
        self._ctx = self.as_default()
        self._ctx.__enter__()
        self._graph_ctx = self.graph.as_default()
        self._graph_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._graph_ctx.__exit__(*exc)
        self._ctx.__exit__(*exc)
        self.close()
        return False


class InteractiveSession(Session):
    """``tf.InteractiveSession``: a session that makes itself (and its
    graph) the default from its creation until :meth:`close`, so
    ``t.eval()`` and ``op.run()`` need no ``with``."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        self._graph_default_ctx = self.graph.as_default()
        self._graph_default_ctx.__enter__()

    def close(self):
        super().close()
        if self._default_ctx is not None:
            self._graph_default_ctx.__exit__(None, None, None)
            self._default_ctx.__exit__(None, None, None)
            self._default_ctx = None


class _SummaryFetch(Tensor):
    """What ``tf.summary.merge`` and ``merge_all`` return: a string scalar
    named as TensorFlow's merged summary (``Merge/MergeSummary:0``).
    Fetching it gives the queue-fullness summaries as ``{tag: value}``
    (TensorFlow's value is a serialized ``Summary``, which feedstock does
    not make)."""

    __slots__ = ()


# ---------------------------------------------------------------- coordinator


class QueueRunnerThread:
    """A native queue-runner thread, as ``start_queue_runners`` returns
    them; :meth:`Coordinator.join` joins them."""

    def __init__(self, native):
        self._t = native

    @property
    def name(self):
        return self._t.name

    def is_alive(self):
        return self._t.is_alive()

    daemon = True

    def start(self):
        """Does nothing: the native thread runs from its creation."""

    def join(self, timeout=None):
        """Waits for the thread to end, ``timeout`` seconds at most (as
        ``threading.Thread.join``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.is_alive() and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.005)

    def __repr__(self):
        return f"<QueueRunnerThread {self.name} alive={self.is_alive()}>"


class Coordinator:
    """``tf.train.Coordinator``: stops threads together and reports the
    first real error. ``OutOfRangeError`` (or the given
    ``clean_stop_exception_types``) counts as a clean stop."""

    def __init__(self, clean_stop_exception_types=None):
        self._c = _native.Coordinator()
        self._exc = None
        self._threads = []
        self._joined = False
        self._lock = threading.Lock()
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean = tuple(clean_stop_exception_types)

    def request_stop(self, ex=None):
        """Asks every thread to stop; ``ex`` (an exception, or a
        ``sys.exc_info()`` tuple) is the reason, re-raised by :meth:`join`
        unless it is a clean stop. After :meth:`join`, a real ``ex`` is
        raised at once, as in TensorFlow."""
        if isinstance(ex, tuple):
            ex = ex[1]
        if ex is not None and isinstance(ex, self._clean):
            ex = None
        if ex is not None and self._joined:
            raise ex
        if ex is None:
            self._c.request_stop()
            return
        with self._lock:
            if self._exc is None:
                self._exc = ex
        kind = type(ex).__name__[: -len("Error")] if isinstance(ex, errors.OpError) else "Unknown"
        self._c.request_stop(kind, str(ex))

    def clear_stop(self):
        """Forgets the stop request and its error, and that the threads
        were joined: the coordinator can be used again."""
        with self._lock:
            self._c = _native.Coordinator()
            self._exc = None
            self._joined = False

    def should_stop(self):
        return self._c.should_stop()

    def wait_for_stop(self, timeout=None):
        return self._c.wait_for_stop(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context manager: any exception inside it requests a stop with
        it (a clean one for ``OutOfRangeError``) and is swallowed."""
        try:
            yield
        except:  # noqa: E722 (TensorFlow's: any exception stops the threads)
            self.request_stop(ex=sys.exc_info())

    def register_thread(self, thread):
        """Adds ``thread`` to those :meth:`join` waits for by default."""
        if thread not in self._threads:
            self._threads.append(thread)

    def raise_requested_exception(self):
        if self._exc is not None:
            raise self._exc
        err = self._c.error()
        if err is not None:
            raise err

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads (the registered ones, including every
        queue runner started with this coordinator, and ``threads``) to end
        or a stop to be requested, then gives them
        ``stop_grace_period_secs`` more. Raises the first error any of them
        or :meth:`request_stop` reported, else ``RuntimeError`` for threads
        still running (unless ``ignore_live_threads``)."""
        threads = list(self._threads) + [t for t in (threads or ()) if t not in self._threads]
        native = [t for t in threads if isinstance(t, QueueRunnerThread)]
        others = [t for t in threads if not isinstance(t, QueueRunnerThread)]
        native_err, stragglers = None, []
        # First until the threads end or a stop is requested: the native
        # join marks the coordinator joined.
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        try:
            self._c.join([t._t for t in native], float(stop_grace_period_secs))
        except errors.DeadlineExceededError as e:
            stragglers = [t.name for t in native if t.name in str(e)] or [str(e)]
        except errors.OpError as e:
            native_err = e
        deadline = time.monotonic() + stop_grace_period_secs
        for t in others:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers += [t.name for t in others if t.is_alive()]
        with self._lock:
            self._joined = True
            self._threads = []
        if self._exc is not None:
            raise self._exc
        if native_err is not None:
            raise native_err
        if stragglers and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: " + " ".join(stragglers))

    @property
    def joined(self):
        """Whether :meth:`join` has run (since :meth:`clear_stop`)."""
        return self._joined


def _wait_for_stop_polling(coord, timeout):
    """``coord.wait_for_stop(timeout)`` by polling: a daemon thread must not
    be blocked in native code when the interpreter exits."""
    deadline = time.monotonic() + max(0.0, timeout)
    while not coord.should_stop():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(left, 0.02))
    return True


class LooperThread(threading.Thread):
    """``tf.train.LooperThread``: a daemon thread, registered with ``coord``,
    calling ``target`` (or :meth:`run_loop`) back to back, or every
    ``timer_interval_secs``, until a stop is requested; an exception
    requests the stop with it."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling ``target`` and returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not _wait_for_stop_polling(self._coord, next_time - time.time()):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts."""

    def stop_loop(self):
        """Called once when the loop ends."""

    def run_loop(self):
        """Called in the loop: runs ``target``."""
        if self._target:
            self._target(*self._args, **self._kwargs)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=QUEUE_RUNNERS):
    """Starts the queue runners of ``sess``'s graph in native threads and
    returns them (``QueueRunnerThread`` objects for ``coord.join``), with a
    coordinator also TensorFlow's close-on-stop thread per runner. A
    collection other than ``tf.GraphKeys.QUEUE_RUNNERS`` starts the
    ``tf.train.QueueRunner`` objects added to it."""
    from ._queues import close_on_stop_thread

    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with sess.as_default()` "
                "or pass an explicit session to tf.start_queue_runners(sess=sess)"
            )
    if collection != QUEUE_RUNNERS:
        threads = []
        for qr in get_default_graph().get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
        return threads
    given = coord is not None
    if coord is None:
        coord = Coordinator()
        sess._implicit_coord = coord
    threads = [QueueRunnerThread(t) for t in sess._s.start_queue_runners(coord._c)]
    if given:
        # One per runner: its threads are named "<queue>-runner-<i>".
        runners = {}
        for t in threads:
            runners.setdefault(t.name.rsplit("-runner-", 1)[0], []).append(t)
        threads += [close_on_stop_thread(q, coord, ts, daemon, start) for q, ts in runners.items()]
    for t in threads:
        coord.register_thread(t)
    return threads
