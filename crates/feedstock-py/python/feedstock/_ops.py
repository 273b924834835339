"""Producers, readers, decoders, image ops and batching for
``feedstock.compat.v1``: each function adds a node to the default graph
and returns symbolic tensors, with TensorFlow 1's signature."""

from __future__ import annotations

import collections
import operator

import numpy as np

from . import errors
from ._native import QueueRef as _QueueRef
from ._dtypes import _dim_value
from ._graph import (
    LOCAL_VARIABLES,
    QUEUE_RUNNERS,
    Operation,
    Tensor,
    TensorShape,
    Variable,
    _next_name,
    _op,
    _random_seed,
    _scope,
    _wrap,
    _wrap1,
    _compatible,
    start_queue_runners,
    _const_array,
    _infer_dtype,
    _shape_arg,
    _under,
    as_dtype,
    convert_to_tensor,
    float32,
    get_default_graph,
    identity,
    int32,
    int64,
    string,
)
from ._summary import _queue_summary
from ._variables import _epoch_counter

# ---------------------------------------------------------------- producers


class QueueBase:
    """A producer's queue (the FIFO queue TensorFlow's producers make)."""

    def __init__(self, graph, native, dtype, name):
        self.graph = graph
        self._q = native
        self.dtype = dtype
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return [self.dtype]

    @property
    def queue_ref(self):
        """The queue itself: what TensorFlow's readers also accept."""
        return self._q

    @property
    def _own_name(self):
        """The queue's name without its scope, which TensorFlow's names of
        the queue's ops start with (``fifo_queue_Dequeue``)."""
        return self._name.split("/")[-1]

    def _op(self, name, suffix):
        """Within it, the next op is named as TensorFlow names this
        queue's ops: ``name``, else the queue's own name (without its
        scope) and ``_<suffix>``, made unique in the current scope
        (``fifo_queue_Dequeue``, ``fifo_queue_Dequeue_1``)."""
        return _next_name(self.graph, name if name is not None else f"{self._own_name}_{suffix}")

    def _dequeue(self, n, up_to, name, suffix=None):
        """The native outputs of a dequeue (``n`` None), ``dequeue_many``
        or ``dequeue_up_to``, named as TensorFlow names them (or with
        ``suffix``)."""
        if n is None:
            with self._op(name, suffix or "Dequeue"):
                return self.graph._g.dequeue(self._q)
        n = _count(n, "n")
        if n < 0:
            raise ValueError(f"Input 'n' must be >= 0, but is {n}")
        with self._op(name, suffix or ("DequeueUpTo" if up_to else "DequeueMany")):
            return self.graph._g.dequeue_many(self._q, n, up_to)

    def dequeue(self, name=None):
        return _wrap1(self.graph, self._dequeue(None, False, name)[0])

    def dequeue_many(self, n, name=None):
        return _wrap1(self.graph, self._dequeue(n, False, name)[0])

    def dequeue_up_to(self, n, name=None):
        return _wrap1(self.graph, self._dequeue(n, True, name)[0])

    def close(self, cancel_pending_enqueues=False, name=None):
        """An op closing the queue."""
        with self._op(name, "Close"):
            o = self.graph._g.queue_close(self._q, bool(cancel_pending_enqueues))
        return Operation(self.graph, [Tensor(self.graph, o)], name=self.graph._g.name(o))

    def size(self, name=None):
        """The number of elements in the queue, an int32 scalar."""
        with self._op(name, "Size"):
            return _wrap1(self.graph, self.graph._g.queue_size(self._q))

    def is_closed(self, name=None):
        """Whether the queue is closed, a bool scalar."""
        with self._op(name, "Is_Closed"):
            return _wrap1(self.graph, self.graph._g.queue_is_closed(self._q))

    def __repr__(self):
        return f"<FIFOQueue '{self.name}'>"


class StageRunner:
    """The runner of a producer or batching stage, as TensorFlow puts one
    in the ``tf.GraphKeys.QUEUE_RUNNERS`` collection for each, so that code
    starting the collection's runners one by one works. The stage's
    threads are feedstock's own: the first ``create_threads`` of a session
    starts every stage of the graph not started yet, as
    ``tf.train.start_queue_runners`` does, and returns their threads
    (with a coordinator, also TensorFlow's close-on-stop thread of each);
    later calls return none."""

    def __init__(self, name, queue=None):
        self._name = name
        self._queue = queue

    @property
    def name(self):
        """The name of the stage's queue."""
        return self._name

    @property
    def queue(self):
        """The producer's queue; ``None`` for a batching stage, whose queue
        has no Python object."""
        return self._queue

    @property
    def enqueue_ops(self):
        """None: the stage enqueues natively."""
        return []

    @property
    def queue_closed_exception_types(self):
        return (errors.OutOfRangeError,)

    @property
    def exceptions_raised(self):
        """Always empty: an error of a stage stops its coordinator."""
        return []

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Starts the graph's stages not yet started in ``sess`` (see the
        class) and returns their threads."""
        return start_queue_runners(sess, coord=coord, daemon=daemon, start=start)

    def __repr__(self):
        return f"<StageRunner '{self._name}'>"


def _producer_queue(g, q, dtype, num_epochs=None, summary=None):
    """A producer's queue, its runner added to the graph's QUEUE_RUNNERS
    collection, and what TensorFlow adds beside it (:func:`_producer_extras`)."""
    queue = QueueBase(g, q, dtype, g._g.queue_name(q))
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(queue.name, queue))
    _producer_extras(g, queue.name, num_epochs, summary)
    return queue


def _producer_extras(g, scope, num_epochs, summary):
    """What TensorFlow's producer named ``scope`` adds to the graph beside
    its queue: with ``num_epochs``, its epoch counter (a local variable,
    ``<scope>/limit_epochs/epochs``); with ``summary``, its fullness
    summary ``<scope>/<summary>`` (in ``tf.GraphKeys.SUMMARIES``)."""
    if num_epochs is not None:
        _epoch_counter(g, f"{scope}/limit_epochs")
    if summary is not None:
        _queue_summary(g, scope, summary)


def _count(n, what):
    """A count given as a Python or numpy integer or a constant tensor."""
    if isinstance(n, Tensor):
        if n._const is None or n._const.ndim != 0:
            raise TypeError(f"{what} must be a constant scalar here, got {n!r}")
        n = n._const.item()
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {n!r}")
    return int(n)




def _epochs(n):
    if n is None:
        return None
    n = int(n)
    if n <= 0:
        raise ValueError(f"num_epochs must be > 0 not {n}.")
    return n


def match_filenames_once(pattern, name=None):
    """The files matching ``pattern``, matched once, when first used
    (``NotFoundError`` then if none match)."""
    g = get_default_graph()
    # As TensorFlow's, a local variable (`matching_filenames`).
    return Variable._over(Tensor(g, g._g.match_filenames_once(str(pattern))), [LOCAL_VARIABLES])


def string_input_producer(
    string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None, cancel_op=None,
    shard=None, remainder="drop",
):
    """Outputs strings (usually filenames) to a queue, once per epoch,
    shuffled within each epoch unless ``shuffle=False``.

    Beyond TensorFlow: ``shard=(index, count)`` (this host's rank and the
    world size) gives the queue only this host's part of the files; the
    hosts' parts are disjoint and together are every record, every epoch,
    and every host reads as many records per epoch. ``remainder`` says how:
    ``"drop"`` cuts every host to the smallest part, ``"pad"`` fills every
    host up to the largest with its own records again, whose keys start
    with ``<pad>``. With several hosts and ``shuffle``, ``seed`` is
    required (the same on every host); the records of each file are
    counted once, by the reader that reads the queue."""
    g = get_default_graph()
    strings = _producer_strings(string_tensor)
    if shard is None:
        q = g._g.string_input_producer(strings, _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    else:
        index, count = shard
        q = g._g.sharded_string_input_producer(
            strings, int(index), int(count), str(remainder), _epochs(num_epochs), bool(shuffle), _random_seed(g, seed),
            int(capacity), name,
        )
    return _producer_queue(g, q, string, num_epochs, f"fraction_of_{int(capacity)}_full")


def _producer_strings(value):
    """``string_input_producer``'s input: a list of file names, or a
    string vector in the graph (refused, as TensorFlow refuses them: a
    bare string, another rank, non-strings)."""
    if isinstance(value, Tensor):
        if value.dtype != string:
            raise TypeError(f"string_input_producer takes a string tensor, got {value.dtype.name}")
        if value.shape.ndims is not None and value.shape.ndims != 1:
            raise ValueError(f"Shape {value.shape} must have rank 1: string_input_producer takes a vector of strings")
        if value._const is None:
            return value._o
        value = value._const.tolist()
    elif isinstance(value, (str, bytes)):
        raise ValueError("Shape () must have rank at least 1: string_input_producer takes a list of strings, not one string")
    elif isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"Shape {value.shape} must have rank 1: string_input_producer takes a vector of strings")
    strings = []
    for v in value:
        if isinstance(v, (bytes, np.bytes_)):
            strings.append(bytes(v).decode())
        elif isinstance(v, str):
            strings.append(str(v))
        else:
            raise TypeError(f"Expected string, but got {v!r} of type '{type(v).__name__}'.")
    if not strings:
        raise ValueError("string_input_producer requires a non-empty list of strings")
    return strings


def input_producer(
    input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
    summary_name=None, name=None, cancel_op=None,
):
    """The rows of ``input_tensor`` to a queue, once per epoch."""
    t = convert_to_tensor(input_tensor)
    g = t.graph
    rows = t.shape._dims
    if element_shape is not None and rows is not None:
        want = _shape_arg(element_shape)
        if not _compatible(rows[1:], want):
            raise ValueError(f"Shapes {tuple(rows[1:])} and {tuple(want)} are not compatible")
    q = g._g.input_producer(t._o, _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    return _producer_queue(g, q, t.dtype, num_epochs, summary_name)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """The integers ``0..limit`` to a queue, once per epoch."""
    g = get_default_graph()
    q = g._g.range_input_producer(_count(limit, "limit"), _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    return _producer_queue(g, q, int32, num_epochs, f"fraction_of_{int(capacity)}_full")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """One row of each tensor at a time, the rows shuffled across each
    epoch unless ``shuffle=False``."""
    ts = [convert_to_tensor(t) for t in tensor_list]
    if not ts:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    g = ts[0].graph
    outs = g._g.slice_input_producer([t._o for t in ts], _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(name or "input_producer"))
    # As TensorFlow's: a range_input_producer under the producer's name,
    # whose index gathers the rows (`<name>/GatherV2`, `<name>/GatherV2_1`).
    scope = g._g.name(outs[0])
    _producer_extras(g, f"{scope}/input_producer", num_epochs, f"fraction_of_{int(capacity)}_full")
    with g.as_default(), _under(g, scope):
        return [identity(_wrap1(g, o), name="GatherV2") for o in outs]


def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor`` ``num_epochs`` times, then ``OutOfRangeError``."""
    t = convert_to_tensor(tensor)
    if num_epochs is None:
        return t
    out = _wrap1(t.graph, t.graph._g.limit_epochs(t._o, _epochs(num_epochs)))
    _epoch_counter(t.graph, t.graph._g.name(out._o))
    return out


# ---------------------------------------------------------------- readers


class ReaderBase:
    """A record reader: ``read(queue)`` gives ``(key, value)``, reading
    files named by ``queue`` one after the other."""

    _kind = None

    def __init__(self, **settings):
        self.graph = get_default_graph()
        self._r = self.graph._g.reader(self._kind, **settings)

    def read(self, queue, name=None):
        """The next record, as ``(key, value)`` string scalars."""
        q = _queue(queue)
        with _next_name(self.graph, name):
            k, v = self.graph._g.read(self._r, q)
        return Tensor(self.graph, k), Tensor(self.graph, v)

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records of one file, as ``(keys,
        values)`` string vectors."""
        q, n = _queue(queue), _count(num_records, "num_records")
        with _next_name(self.graph, name):
            k, v = self.graph._g.read_up_to(self._r, q, n)
        return Tensor(self.graph, k), Tensor(self.graph, v)

    def _state(self, op, state=None):
        return _wrap1(self.graph, self.graph._g.reader_state(self._r, op, state))

    def num_records_produced(self, name=None):
        """The records this reader has returned, an int64 scalar."""
        return self._state("num_records_produced")

    def num_work_units_completed(self, name=None):
        """The files this reader has finished, an int64 scalar: a file
        counts once its end is seen (with ``read``, on the call after its
        last record)."""
        return self._state("num_work_units_completed")

    def reset(self, name=None):
        """An op returning the reader to a clean slate: counters at zero,
        no current file (the next read takes a new one from its queue)."""
        return Operation(self.graph, [self._state("reset")], name=name or "ReaderReset")

    def serialize_state(self, name=None):
        """The reader's position as a string scalar, for
        ``restore_state``. Unlike TensorFlow, every reader kind can save
        its place inside a file."""
        return self._state("serialize_state")

    def restore_state(self, state, name=None):
        """An op resuming the reader at a position ``serialize_state``
        gave."""
        state = convert_to_tensor(state, dtype=string)
        return Operation(self.graph, [self._state("restore_state", state._o)], name=name or "ReaderRestoreState")

    @property
    def reader_ref(self):
        """The reader itself (TensorFlow's reader handle)."""
        return self._r

    @property
    def supports_serialize(self):
        """True: every feedstock reader saves and restores its position."""
        return True


def _queue(q):
    if isinstance(q, QueueBase):
        return q._q
    if isinstance(q, _QueueRef):
        return q
    raise TypeError(f"a reader reads from a queue (string_input_producer's result), got {type(q).__name__}")


def _compression(options):
    from .tfrecord import TFRecordOptions

    return TFRecordOptions.get_compression_type_string(options)


class TextLineReader(ReaderBase):
    """``tf.TextLineReader``: one record per line (newline removed).

    An empty file fails ``DataLossError`` naming it (a file cut to
    nothing is more often damage than data); ``allow_empty_files=True``
    reads it as no lines, as TensorFlow does."""

    _kind = "text_line"

    def __init__(self, skip_header_lines=None, name=None, allow_empty_files=False):
        skip = _count(skip_header_lines or 0, "skip_header_lines")
        if skip < 0:
            raise ValueError(f"skip_header_lines must be >= 0 not {skip}")
        super().__init__(skip_header_lines=skip, allow_empty_files=bool(allow_empty_files))


class FixedLengthRecordReader(ReaderBase):
    """``tf.FixedLengthRecordReader``: records of ``record_bytes``."""

    _kind = "fixed_length"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None, encoding=None):
        sizes = {
            "record_bytes": record_bytes, "header_bytes": header_bytes or 0, "footer_bytes": footer_bytes or 0,
            "hop_bytes": hop_bytes or 0,
        }
        for what, n in sizes.items():
            sizes[what] = _count(n, what)
            if sizes[what] < 0:
                raise ValueError(f"{what} must be >= 0 not {n}")
        super().__init__(**sizes, compression=_compression(encoding))


class TFRecordReader(ReaderBase):
    """``tf.TFRecordReader``: the records of TFRecord files.

    A damaged record fails ``DataLossError`` naming the file and offset,
    as in TensorFlow. Beyond TensorFlow, ``skip_corrupt`` (a dict of
    ``max_per_file``, ``max_per_run``, ``max_fraction``, each optional)
    skips damaged regions within that budget instead; the session's
    ``skip_stats()`` counts them. An empty file fails ``DataLossError``
    naming it unless ``allow_empty_files=True`` (TensorFlow reads it as
    no records)."""

    _kind = "tfrecord"

    def __init__(self, name=None, options=None, skip_corrupt=None, allow_empty_files=False):
        if skip_corrupt is not None and not isinstance(skip_corrupt, dict):
            raise TypeError(f"skip_corrupt is a dict or None, got {type(skip_corrupt).__name__}")
        super().__init__(
            compression=_compression(options), skip_corrupt=skip_corrupt, allow_empty_files=bool(allow_empty_files),
        )


class WholeFileReader(ReaderBase):
    """``tf.WholeFileReader``: one record per file (key: the file name)."""

    _kind = "whole_file"

    def __init__(self, name=None):
        super().__init__()


class IdentityReader(ReaderBase):
    """``tf.IdentityReader``: the work item is the record."""

    _kind = "identity"

    def __init__(self, name=None):
        super().__init__()


def read_file(filename, name=None):
    """``tf.io.read_file``: the contents of the file ``filename`` (a
    string scalar) names, read each time the tensor is run."""
    t = convert_to_tensor(filename, dtype=string)
    with _next_name(t.graph, name):
        return _op(t.graph, "ReadFile", [t])


def matching_files(pattern, name=None):
    """``tf.io.matching_files``: the files matching ``pattern`` (a string
    scalar), sorted, matched each time the tensor is run; none is an
    empty vector."""
    t = convert_to_tensor(pattern, dtype=string)
    return _op(t.graph, "MatchingFiles", [t])


# ---------------------------------------------------------------- decoders


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="", select_cols=None):
    """Splits CSV records into one tensor per column; each default ``[x]``
    gives the column's dtype and its value for an empty field, ``[]`` (or
    an empty constant) makes the column required (float32 for a bare
    ``[]``, as TensorFlow converts it)."""
    records = convert_to_tensor(records)
    if records.dtype != string:
        raise TypeError(f"Input 'records' of 'DecodeCSV' Op has type {records.dtype.name} that does not match expected type of string.")
    if not isinstance(record_defaults, (list, tuple)):
        raise TypeError(f"Expected list for 'record_defaults', got {type(record_defaults).__name__}")
    if use_quote_delim is None:
        use_quote_delim = True
    if not isinstance(use_quote_delim, (bool, np.bool_)):
        raise TypeError(f"Expected bool for argument 'use_quote_delim' not {use_quote_delim!r}.")
    if select_cols is not None:
        select_cols = _select_cols(select_cols, len(record_defaults))
    g = records.graph
    defaults = [_record_default(i, d) for i, d in enumerate(record_defaults)]
    with _next_name(g, name):
        outs = g._g.decode_csv(
            records._o, defaults, _text(field_delim), bool(use_quote_delim), _text(na_value) or None, select_cols,
        )
    return _wrap(g, outs)


_CSV_DTYPES = ("float32", "float64", "int32", "int64", "string")


def _record_default(i, d):
    """``(dtype, values)`` of record default ``i``: converted as
    TensorFlow converts it to a tensor (``[]`` float32, a list's numbers
    float32 or int32/int64), one value or none (a required column)."""
    if isinstance(d, Tensor):
        if d._const is None:
            raise TypeError(
                f"record_defaults[{i}] is computed in the graph; feedstock takes record defaults that are constants"
            )
        dt, arr = d.dtype, np.asarray(d._const)
    else:
        dt = _infer_dtype(d)
        arr = _const_array(d, dt)
    if dt._native not in _CSV_DTYPES:
        raise TypeError(
            f"Value passed to parameter 'record_defaults' has DataType {dt.name} not in list of allowed values: "
            "float32, float64, int32, int64, string"
        )
    if arr.ndim > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {arr.ndim} for record_defaults[{i}]")
    if arr.size > 1:
        raise ValueError(
            f"Shape of a default must be a length-0 or length-1 vector, or a scalar; record_defaults[{i}] has {arr.size} values"
        )
    return dt._native, arr.reshape(-1)


def _select_cols(cols, n):
    if not isinstance(cols, (list, tuple)):
        raise TypeError(f"Expected list for 'select_cols', got {type(cols).__name__}")
    cols = [int(c) for c in cols]
    if any(c < 0 for c in cols):
        raise ValueError("select_cols contains negative values.")
    if any(b <= a for a, b in zip(cols, cols[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    if len(cols) != n:
        raise ValueError("Length of select_cols and record_defaults do not match.")
    return cols


def _text(s):
    """A delimiter or NA marker given as ``str`` or ``bytes``."""
    return s.decode() if isinstance(s, bytes) else s


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Reinterprets the bytes of each string as a vector of ``out_type``."""
    x = convert_to_tensor(input_bytes if input_bytes is not None else bytes)
    with _next_name(x.graph, name):
        return _op(x.graph, "DecodeRaw", [x], out_type=as_dtype(out_type)._native, little_endian=bool(little_endian))


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed ``shape`` (``default_value`` when missing;
    without one it is required). A namedtuple, as TensorFlow's; the fields
    are checked when a parse op is built."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values; parsed as a ``SparseTensor``."""

    __slots__ = ()


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A sparse tensor built from index features (``index_key``, a name or
    a list of names) and a value feature; ``size`` is the dense shape (an
    int, or a list of one per index key)."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """Rows of ``shape``, any number of them (``allow_missing=True``)."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_SPEC_CLASSES = (FixedLenFeature, VarLenFeature, SparseFeature, FixedLenSequenceFeature)


def _spec(features):
    """The native spec entries of a dict of feature specs, checked as
    TensorFlow checks them when it builds the parse op (ValueError for a
    bad shape or spec, TypeError for a bad dtype or default)."""
    entries = []
    for name, f in features.items():
        if not isinstance(f, _SPEC_CLASSES):
            raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{name}'")
        dtype = _spec_dtype(name, f)
        if isinstance(f, FixedLenFeature):
            shape = _spec_shape(name, f, sequence=False)
            d = None if f.default_value is None else _spec_default(name, f.default_value, dtype, shape)
            entries.append(("fixed", name, dtype._native, shape, d))
        elif isinstance(f, VarLenFeature):
            entries.append(("var_len", name, dtype._native))
        elif isinstance(f, SparseFeature):
            index_keys, size = _sparse_keys_and_size(f)
            entries.append(("sparse", name, index_keys, f.value_key, dtype._native, size, bool(f.already_sorted)))
        else:
            shape = _spec_shape(name, f, sequence=True)
            d = None if f.default_value is None else _spec_default(name, f.default_value, dtype, None)
            entries.append(("fixed_sequence", name, dtype._native, shape, bool(f.allow_missing), d))
    return entries


def _spec_dtype(name, f):
    """The feature's dtype: float32, int64 or string, else TypeError."""
    if f.dtype is None:
        raise ValueError(f"Missing type for feature {name}. Received feature={f}.")
    dtype = as_dtype(f.dtype)
    if dtype not in (float32, int64, string):
        param = "dense_defaults" if isinstance(f, (FixedLenFeature, FixedLenSequenceFeature)) else "sparse_types"
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {dtype.name} not in list of allowed values: "
            "float32, int64, string"
        )
    return dtype


def _spec_shape(name, f, sequence):
    """The feature's shape as a list of ints: a list, tuple, int or
    TensorShape of known, non-negative sizes."""
    if f.shape is None:
        raise ValueError(f"Missing shape for feature {name}. Received feature={f}.")
    dims = _shape_arg_dims(f.shape)
    if dims is None or None in dims:
        if not sequence and dims and dims[0] is None:
            raise ValueError(
                f"First dimension of shape for feature {name} unknown. Consider using "
                f"FixedLenSequenceFeature. Received feature={f}."
            )
        shown = "<unknown>" if dims is None else dims
        raise ValueError(f"All dimensions of shape for feature {name} need to be known but received {shown}.")
    for d in dims:
        if d < 0:
            raise ValueError(f"Dimension {d} must be >= 0")
    return dims


def _shape_arg_dims(shape):
    """``shape`` (a TensorShape, an int or a sequence of ints, None and
    Dimensions) as a list of ints and None, or None for an unknown rank;
    unlike :func:`_shape_arg`, a negative size stays, to be refused."""
    if isinstance(shape, TensorShape):
        return shape.as_list() if shape._dims is not None else None
    if isinstance(shape, (int, np.integer)):
        return [operator.index(shape)]
    dims = [_dim_value(d) for d in shape]
    return [None if d is None else operator.index(d) for d in dims]


def _spec_default(name, v, dtype, shape):
    """A FixedLenFeature's (or FixedLenSequenceFeature's) default as an
    array of ``dtype``, reshaped to ``shape`` (left as it is for None).
    A constant tensor gives its value. TypeError for a value that does
    not convert to ``dtype`` without loss, ValueError for a wrong number
    of values."""
    if isinstance(v, Tensor):
        if v._const is None:
            raise ValueError(f"feature {name!r}: default_value must be a constant tensor")
        if v.dtype != dtype:
            raise TypeError(f"feature {name!r}: default_value has dtype {v.dtype.name}, expected {dtype.name}")
        arr = np.asarray(v._const)
    else:
        arr = _const_default(v, dtype)
    if shape is None:
        return arr
    n = int(np.prod(shape, dtype=np.int64))
    if arr.size != n:
        raise ValueError(
            f"Cannot reshape a tensor with {arr.size} elements to shape {shape} ({n} elements) "
            f"for the default_value of feature {name!r}"
        )
    return arr.reshape(shape)


def _sparse_keys_and_size(f):
    """A SparseFeature's index keys and size as lists; TypeError for a
    size that is not an int (a list of them for several index keys)."""
    if isinstance(f.index_key, str):
        return [f.index_key], [_sparse_size(f.size)]
    sizes = f.size if isinstance(f.size, (list, tuple)) else [f.size]
    return list(f.index_key), [_sparse_size(s) for s in sizes]


def _sparse_size(size):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"vocab_size has to be a Tensor or Python int. Found {type(size)}")
    return int(size)


def _const_default(v, dtype):
    """``v`` as an array of ``dtype``; TypeError where TensorFlow refuses
    the conversion or it would lose information (1.5 for an int64)."""
    if dtype == string:
        a = np.asarray(v, dtype=object)
        for x in a.flat:
            if not isinstance(x, (str, bytes)):
                _default_type_error(x, dtype)
        return np.vectorize(lambda x: x.encode() if isinstance(x, str) else x, otypes=[object])(a) if a.size else a
    try:
        a = np.asarray(v)
    except ValueError as e:
        raise ValueError(f"default_value {v!r}: {e}") from None
    if a.dtype.kind not in "biuf":
        bad = next((x for x in a.flat if not isinstance(x, (int, float, np.number))), a.flat[0])
        _default_type_error(bad, dtype)
    out = a.astype(dtype._native)
    if a.dtype.kind == "f" and dtype == int64 and not np.array_equal(out, a):
        bad = next(x for x, y in zip(a.flat, out.flat) if x != y)
        _default_type_error(bad, dtype)
    return out


def _default_type_error(x, dtype):
    raise TypeError(f"Expected {dtype.name}, but got {x!r} of type '{type(x).__name__}'.")


def _check_features(features):
    """ValueError for no features at all, as TensorFlow's parse ops raise."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features!r}")


def _parse(serialized, features, batched, name):
    """The parsing node, named as TensorFlow 2.21 names its op
    (``ParseSingleExample/ParseExample/ParseExampleV2``, with ``name=n``
    ``n/n/n``; batched ``ParseExample/ParseExampleV2``, ``n/n``), its
    outputs in TensorFlow's order, so that a dense-only spec's tensors are
    named as TensorFlow's (``...ParseExampleV2:1`` for the second key)."""
    _check_features(features)
    s = convert_to_tensor(serialized)
    g = s.graph
    outer = _scope(g, name, "ParseExample" if batched else "ParseSingleExample")
    inner = [] if batched else [name or "ParseExample"]
    ordered = _in_tf_order(features, list(features.values()))
    with _next_name(g, "/".join([outer, *inner, name or "ParseExampleV2"]), exact=True):
        outs = g._g.parse_example(s._o, _spec(ordered), batched)
    return dict(zip(ordered, _wrap(g, outs)))


def _in_tf_order(spec, outputs):
    """The parsed ``outputs`` (in ``spec``'s order) as a dict keyed in
    TensorFlow's order: ``VarLenFeature`` keys sorted, then the dense ones
    sorted, then the ``SparseFeature`` ones sorted."""
    def place(key):
        f = spec[key]
        return (0 if isinstance(f, VarLenFeature) else 2 if isinstance(f, SparseFeature) else 1, key)

    values = dict(zip(spec.keys(), outputs))
    return {k: values[k] for k in sorted(values, key=place)}


def parse_single_example(serialized, features=None, name=None, example_names=None):
    """Parses one serialized ``tf.train.Example`` into a dict of tensors
    (sparse for ``VarLenFeature`` and ``SparseFeature``)."""
    return _parse(serialized, features, False, name)


def parse_example(serialized, features=None, name=None, example_names=None):
    """Parses a vector of serialized Examples; every output has a leading
    batch dimension."""
    return _parse(serialized, features, True, name)


def _parse_sequence(serialized, context_features, sequence_features, batched, name):
    """The parsing node, named as TensorFlow 2.21 names its op
    (``ParseSingleSequenceExample/ParseSequenceExample/
    ParseSequenceExampleV2``, batched ``ParseSequenceExample/
    ParseSequenceExample/ParseSequenceExampleV2``; ``name=n`` for each
    part), its outputs in
    TensorFlow's order, so that dense features' tensors are named as
    TensorFlow's."""
    s = convert_to_tensor(serialized)
    g = s.graph
    context = dict(context_features or {})
    sequence = dict(sequence_features or {})
    context = _in_tf_order(context, list(context.values()))
    sequence = _in_tf_order(sequence, list(sequence.values()))
    outer = _scope(g, name, "ParseSequenceExample" if batched else "ParseSingleSequenceExample")
    with _next_name(g, f"{outer}/{name or 'ParseSequenceExample'}/{name or 'ParseSequenceExampleV2'}", exact=True):
        c, f, l = g._g.parse_sequence_example(s._o, _spec(context), _spec(sequence), batched)
    # Lengths exist for the FixedLenSequenceFeature lists only, as in
    # TensorFlow, in the spec's order.
    fixed = {k: v for k, v in sequence.items() if isinstance(v, FixedLenSequenceFeature)}
    return (_in_tf_order(context, _wrap(g, c)), _in_tf_order(sequence, _wrap(g, f)),
            _in_tf_order(fixed, _wrap(g, l)))


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized ``tf.train.SequenceExample`` into
    ``(context, feature_lists)``, two dicts of tensors: the context parsed
    as an Example's; a ``FixedLenSequenceFeature`` list dense
    ``[steps, *shape]``, a ``VarLenFeature`` one sparse ``[steps, max_len]``."""
    context, lists, _ = _parse_sequence(serialized, context_features, sequence_features, False, name)
    return context, lists


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a vector of serialized SequenceExamples into
    ``(context, feature_lists, feature_list_lengths)``: every output has a
    leading batch dimension, ``FixedLenSequenceFeature`` lists are padded
    to the longest, and their lengths (int64 ``[batch]``) are the third dict."""
    return _parse_sequence(serialized, context_features, sequence_features, True, name)


# Defined in _image_ops, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._image_ops import (  # noqa: E402,F401
    ResizeMethod,
    _DECODE_DTYPES,
    _DECODE_OPS,
    _RGB_WEIGHTS,
    _adjust_hsv,
    _as_float_image,
    _box_tensors,
    _colour_op,
    _convert_image_dtype,
    _decode_image,
    _dtype_max,
    _factor,
    _image,
    _image_rank_3_or_4,
    _known_int,
    _pair_attr,
    _random_uniform,
    _rank4_images,
    _resize_extra,
    _resize_op,
    _resize_size,
    _saturate_cast,
    _static_box_int,
    _static_ints,
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    decode_and_crop_jpeg,
    decode_image,
    is_jpeg,
    decode_jpeg,
    decode_png,
    draw_bounding_boxes,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    flip_left_right,
    flip_up_down,
    grayscale_to_rgb,
    hsv_to_rgb,
    pad_to_bounding_box,
    per_image_standardization,
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    random_hue,
    random_saturation,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_image_with_crop_or_pad,
    resize_images,
    resize_nearest_neighbor,
    rgb_to_grayscale,
    rgb_to_hsv,
    rot90,
    sample_distorted_bounding_box,
    transpose_image,
)


# Defined in _batching, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._batching import (  # noqa: E402,F401
    __all__,
    _as_list,
    _as_lists,
    _as_original,
    _batch,
    _batch_size,
    _capacity,
    _int_arg,
    _keep_input,
    _num_threads,
    _shapes,
    batch,
    batch_join,
    maybe_batch,
    maybe_batch_join,
    maybe_shuffle_batch,
    maybe_shuffle_batch_join,
    shuffle_batch,
    shuffle_batch_join,
)
