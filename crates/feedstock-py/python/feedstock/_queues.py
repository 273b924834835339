"""Queues made by hand and the runners that fill them, for
``feedstock.compat.v1``: ``tf.FIFOQueue``, ``tf.PaddingFIFOQueue``,
``tf.RandomShuffleQueue`` and ``tf.train.QueueRunner``, with
TensorFlow 1's signatures. The queues and the runner threads are
feedstock's own; an enqueue op a runner runs is evaluated natively."""

from __future__ import annotations

import threading
import time

import numpy as np

from . import _ops, errors
from ._dtypes import Dimension, _dim_value
from ._graph import (
    QUEUE_RUNNERS,
    Operation,
    Tensor,
    QueueRunnerThread,
    TensorShape,
    _next_name,
    _random_seed,
    _scope,
    _under,
    _wrap,
    _wrap1,
    as_dtype,
    convert_to_tensor,
    get_default_graph,
)


def _shape_list(shape):
    """A component's shape for the native queue: ``None`` (any shape) or
    a list of dimensions, ``None`` for an unknown one."""
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return None if shape._dims is None else shape.as_list()
    if isinstance(shape, (int, Dimension)):
        return [_dim_value(shape)]
    dims = [_dim_value(d) for d in shape]
    return [None if d is None else int(d) for d in dims]


def _is_dim(d):
    return d is None or isinstance(d, Dimension) or (isinstance(d, (int, np.integer)) and not isinstance(d, bool))


def _as_shape_list(shapes, partial):
    """The queue's component shapes as TensorFlow's ``_as_shape_list``
    reads them: ``None`` (any shapes; not for a padding queue), one
    TensorShape, one flat list of dimensions (``[]`` too) for a single
    component, or a list of shapes. Shapes must have a known rank and,
    unless ``partial`` (a padding queue), known dimensions."""
    if partial and (
        not isinstance(shapes, (list, tuple))
        or not shapes
        or any(s is None or isinstance(s, int) for s in shapes)
    ):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError(
            "Shapes must be a TensorShape or a list or tuple of TensorShapes, " f"got {type(shapes)} instead."
        )
    if all(_is_dim(s) for s in shapes):
        shapes = [shapes]
    out = [_shape_list(s) for s in shapes]
    if not partial and any(s is None or None in s for s in out):
        raise ValueError(f"All shapes must be fully defined: {[TensorShape(s) for s in out]}")
    if any(s is None for s in out):
        raise ValueError(f"All shapes must have a defined rank: {[TensorShape(s) for s in out]}")
    return out


class QueueBase(_ops.QueueBase):
    """A queue of tuples of tensors, made by hand (TensorFlow's
    ``tf.QueueBase``); use :class:`FIFOQueue`, :class:`PaddingFIFOQueue`
    or :class:`RandomShuffleQueue`. A reader reads file names from one
    as from a producer's queue."""

    def __init__(self, kind, capacity, dtypes, shapes, names, name, min_after_dequeue=0, seed=None):
        # TensorFlow asserts that dtypes is given (an AssertionError), and
        # refuses a None among them (a TypeError, in its words).
        if dtypes is None:
            raise AssertionError("a queue needs dtypes, got None")
        if not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        if any(d is None for d in dtypes):
            raise TypeError("Expected DataType for argument 'component_types' not None.")
        self._dtypes = [as_dtype(d) for d in dtypes]
        shapes = _as_shape_list(shapes, kind == "padding_fifo")
        if shapes is None:
            shapes = [None] * len(self._dtypes)
        if len(shapes) != len(self._dtypes):
            raise ValueError(
                "Queue shapes must have the same length as dtypes, "
                f"received len(shapes)={len(shapes)}, len(dtypes)={len(self._dtypes)}"
            )
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(self._dtypes):
                raise ValueError(
                    "List of names must have the same length as the list of dtypes, "
                    f"received len(names)={len(names)},len(dtypes)={len(self._dtypes)}"
                )
        self._names = names
        self._shapes = [TensorShape(s) for s in shapes]
        capacity = int(capacity)
        # TensorFlow's capacity of -1 (or any negative) means no bound.
        capacity = 2**31 - 1 if capacity < 0 else capacity
        g = get_default_graph()
        self.graph = g
        # What the native queue refuses, TensorFlow refuses as it builds
        # the queue: the graph wrapper raises it as a ValueError.
        self._q = g._g.queue(
            kind, capacity, [d.name for d in self._dtypes], shapes, int(min_after_dequeue),
            _random_seed(g, seed), name,
        )
        self._name = g._g.queue_name(self._q)

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    @property
    def names(self):
        return None if self._names is None else list(self._names)

    def _values(self, vals):
        """``vals`` as one tensor per component, converted to its dtype
        (a value that is not a tensor becomes ``component_<i>``)."""
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError("Queue with names must be given a dictionary of values")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"Keys in dictionary {sorted(vals)} must match the queue names {sorted(self._names)}")
            vals = [vals[n] for n in self._names]
        elif isinstance(vals, dict):
            raise ValueError("Queue without names given a dictionary of values")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} values, got {len(vals)}")
        return [convert_to_tensor(v, dtype=d, name=f"component_{i}") for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    def _enqueue(self, vals, many, name):
        # Named as TensorFlow names it: a scope (`fifo_queue_enqueue`,
        # `fifo_queue_EnqueueMany`) the values are converted under.
        g = self.graph
        default = f"{self._own_name}_{'EnqueueMany' if many else 'enqueue'}"
        scope = _scope(g, name, default)
        with _under(g, scope):
            ts = self._values(vals)
        # TensorFlow checks dtypes and static shapes as it builds: the
        # graph wrapper raises a refusal as a ValueError.
        with _next_name(g, scope, exact=True):
            o = g._g.enqueue(self._q, [t._o for t in ts], many)
        return Operation(g, [Tensor(g, o)], name=g._g.name(o))

    def enqueue(self, vals, name=None):
        """An op adding one element (a tensor, a tuple, or a dict when the
        queue has names), named ``<queue>_enqueue``."""
        return self._enqueue(vals, False, name)

    def enqueue_many(self, vals, name=None):
        """An op adding the rows of a batch: every component's axis 0."""
        return self._enqueue(vals, True, name)

    def _out(self, outs):
        ts = _wrap(self.graph, outs)
        if self._names is not None:
            return dict(zip(self._names, ts))
        return ts[0] if len(ts) == 1 else ts

    def dequeue(self, name=None):
        """The next element: a tensor for a one-component queue, a list
        otherwise, a dict when the queue has names."""
        return self._out(self._dequeue(None, False, name))

    def dequeue_many(self, n, name=None):
        """The next ``n`` elements, stacked (none, at once, for 0)."""
        return self._out(self._dequeue(n, False, name))

    def dequeue_up_to(self, n, name=None):
        """Up to ``n`` elements, stacked: fewer only once the queue is
        closed."""
        return self._out(self._dequeue(n, True, name))

    def __repr__(self):
        return f"<{type(self).__name__} '{self._name}'>"


class FIFOQueue(QueueBase):
    """``tf.FIFOQueue``: elements leave in the order they came in."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        super().__init__("fifo", capacity, dtypes, shapes, names, name)


class PaddingFIFOQueue(QueueBase):
    """``tf.PaddingFIFOQueue``: a FIFO queue whose ``dequeue_many`` pads
    each component to the batch's longest; every component needs a
    shape, whose dimensions may be ``None``."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        super().__init__("padding_fifo", capacity, dtypes, shapes, names, name)


class RandomShuffleQueue(QueueBase):
    """``tf.RandomShuffleQueue``: elements leave in random order, at least
    ``min_after_dequeue`` staying behind until the queue is closed."""

    def __init__(
        self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
        name="random_shuffle_queue",
    ):
        if int(min_after_dequeue) < 0:
            raise ValueError(f"min_after_dequeue must be >= 0, got {min_after_dequeue}")
        super().__init__("random_shuffle", capacity, dtypes, shapes, names, name, min_after_dequeue, seed)


class PriorityQueue(QueueBase):
    """``tf.PriorityQueue``: elements leave smallest priority first (equal
    ones in the order TensorFlow's heap gives them, which is not the order
    they came in). Every element starts with its int64
    scalar priority, followed by components of ``types``."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        if shapes is None:
            raise TypeError("Expected list for 'shapes' argument to 'priority_queue_v2' Op, not None.")
        shapes = [[]] + _as_shape_list(shapes, False)
        super().__init__("priority", capacity, [as_dtype("int64")] + types, shapes, names, name)

    def dequeue_up_to(self, n, name=None):
        """As :meth:`dequeue_many`: TensorFlow's priority queue gives no
        smaller batch once closed, but fails OutOfRange (feedstock keeps
        the elements, TensorFlow loses them)."""
        return self._out(self._dequeue(n, False, name, "DequeueUpTo"))


def _kind_name(cls):
    return cls.__name__[: -len("Error")]


def _closed_types(types):
    """``queue_closed_exception_types`` checked as TensorFlow checks it: a
    non-empty tuple of ``tf.errors`` classes (``None``: OutOfRangeError)."""
    if types is None:
        return (errors.OutOfRangeError,)
    if (
        not isinstance(types, tuple)
        or not types
        or not all(isinstance(t, type) and issubclass(t, errors.OpError) for t in types)
    ):
        raise TypeError(
            "queue_closed_exception_types, when provided, must be a tuple of tf.error types, "
            f"but saw: {types}"
        )
    return types


def close_on_stop_thread(queue_name, coord, runner_threads, daemon=True, start=True):
    """The thread TensorFlow adds to a runner's threads when it has a
    coordinator (``QueueRunnerThread-<queue>-close_on_stop``): it waits
    for the stop, when feedstock's runner itself closes the queue. It also
    ends once ``runner_threads`` have all ended, so that joining never
    hangs on it."""

    def wait():
        # Polls rather than blocking in native code, which a daemon thread
        # must not be in when the interpreter exits.
        while not coord.should_stop() and any(t.is_alive() for t in runner_threads):
            time.sleep(0.05)

    t = threading.Thread(target=wait, name=f"QueueRunnerThread-{queue_name}-close_on_stop", daemon=True)
    if start:
        t.start()
    return t


class QueueRunner:
    """``tf.train.QueueRunner``: one native thread per enqueue op, each
    running its op until it fails, plus (with a coordinator) TensorFlow's
    thread waiting to close the queue on stop. ``OutOfRangeError`` (or one
    of ``queue_closed_exception_types``) ends a thread cleanly and the last
    to end closes the queue; any other error stops the coordinator with
    it. The queue is closed by feedstock's runner itself: ``close_op`` and
    ``cancel_op``, when given, must be the queue's own close ops."""

    def __init__(
        self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None, queue_closed_exception_types=None,
        queue_runner_def=None, import_scope=None,
    ):
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner from a QueueRunnerDef is not supported")
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        if not isinstance(queue, QueueBase):
            raise TypeError("QueueRunner needs a queue made with tf.FIFOQueue, tf.PaddingFIFOQueue or tf.RandomShuffleQueue")
        self._closed_types = _closed_types(queue_closed_exception_types)
        kinds = [_kind_name(c) for c in self._closed_types]
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        outs = []
        for op in self._enqueue_ops:
            if not isinstance(op, Operation) or len(op.inputs) != 1:
                raise TypeError(f"{op!r} is not an enqueue op of {queue.name}")
            outs.append(op.inputs[0]._o)
        self._r = queue.graph._g.queue_runner(queue._q, outs, kinds)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        # The coordinators of the sessions started without one.
        self._implicit_coords = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._closed_types

    @property
    def exceptions_raised(self):
        """The errors of the threads started without a coordinator (with
        one, an error stops the coordinator instead, as in TensorFlow)."""
        errs = (c._c.error() for c in self._implicit_coords)
        return [e for e in errs if e is not None]

    @property
    def name(self):
        return self._queue.name

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Starts the runner's native threads in ``sess`` and returns them
        (none when it was started there before), with a coordinator also
        TensorFlow's close-on-stop thread. The native threads start at
        once, whatever ``start`` says: threads that have not started cannot
        lose data, so starting early only fills the queue sooner;
        ``start()`` on them does nothing."""
        from ._graph import Coordinator

        given = coord is not None
        if coord is None:
            coord = Coordinator()
            sess._implicit_coord = coord
            self._implicit_coords = [coord]
        threads = [QueueRunnerThread(t) for t in sess._s.start_queue_runner(self._r, coord._c)]
        if threads and given:
            threads.append(close_on_stop_thread(self.name, coord, list(threads), daemon, start))
        for t in threads:
            coord.register_thread(t)
        return threads


def add_queue_runner(qr, collection=QUEUE_RUNNERS):
    """Adds ``qr`` to the graph's runners, which
    ``tf.train.start_queue_runners`` starts."""
    g = qr.queue.graph
    if collection == QUEUE_RUNNERS:
        g._g.add_queue_runner(qr._r)
    g.add_to_collection(collection, qr)
