"""Producers, readers, decoders, image ops and batching for
``feedstock.compat.v1``: each function adds a node to the default graph
and returns symbolic tensors, with TensorFlow 1's signature."""

from __future__ import annotations

import collections
import math
import operator

import numpy as np

from . import errors
from ._native import QueueRef as _QueueRef
from ._graph import (
    QUEUE_RUNNERS,
    SUMMARIES,
    Operation,
    SparseTensor,
    Tensor,
    TensorShape,
    InvalidArgumentValueError,
    _next_name,
    _op,
    _ops,
    _random_seed,
    _wrap,
    _wrap1,
    _compatible,
    start_queue_runners,
    _const_array,
    _infer_dtype,
    _shape_arg,
    as_dtype,
    bool_,
    constant,
    convert_to_tensor,
    float32,
    get_default_graph,
    int32,
    int64,
    stack,
    string,
    uint8,
)

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


def _producer_queue(g, q, dtype):
    """A producer's queue, its runner added to the graph's QUEUE_RUNNERS
    collection."""
    queue = QueueBase(g, q, dtype, g._g.queue_name(q))
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(queue.name, queue))
    return queue


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
    return Tensor(g, g._g.match_filenames_once(str(pattern)))


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
    return _producer_queue(g, q, string)


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
    rows = t.shape.dims
    if element_shape is not None and rows is not None:
        want = _shape_arg(element_shape)
        if not _compatible(rows[1:], want):
            raise ValueError(f"Shapes {tuple(rows[1:])} and {tuple(want)} are not compatible")
    q = g._g.input_producer(t._o, _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    return _producer_queue(g, q, t.dtype)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """The integers ``0..limit`` to a queue, once per epoch."""
    g = get_default_graph()
    q = g._g.range_input_producer(_count(limit, "limit"), _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    return _producer_queue(g, q, int32)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """One row of each tensor at a time, the rows shuffled across each
    epoch unless ``shuffle=False``."""
    ts = [convert_to_tensor(t) for t in tensor_list]
    if not ts:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    g = ts[0].graph
    outs = g._g.slice_input_producer([t._o for t in ts], _epochs(num_epochs), bool(shuffle), _random_seed(g, seed), int(capacity), name)
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(name or "input_producer"))
    return [_wrap1(g, o) for o in outs]


def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor`` ``num_epochs`` times, then ``OutOfRangeError``."""
    t = convert_to_tensor(tensor)
    if num_epochs is None:
        return t
    return _wrap1(t.graph, t.graph._g.limit_epochs(t._o, _epochs(num_epochs)))


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
    """``shape`` (a TensorShape, an int or a sequence of ints and None) as
    a list of ints and None, or None for an unknown rank."""
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [operator.index(shape)]
    return [None if d is None else operator.index(d) for d in shape]


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


def _parse(serialized, features, batched):
    _check_features(features)
    s = convert_to_tensor(serialized)
    g = s.graph
    outs = g._g.parse_example(s._o, _spec(features), batched)
    return _in_tf_order(features, _wrap(g, outs))


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
    return _parse(serialized, features, False)


def parse_example(serialized, features=None, name=None, example_names=None):
    """Parses a vector of serialized Examples; every output has a leading
    batch dimension."""
    return _parse(serialized, features, True)


def _parse_sequence(serialized, context_features, sequence_features, batched):
    s = convert_to_tensor(serialized)
    g = s.graph
    context = dict(context_features or {})
    sequence = dict(sequence_features or {})
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
    context, lists, _ = _parse_sequence(serialized, context_features, sequence_features, False)
    return context, lists


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a vector of serialized SequenceExamples into
    ``(context, feature_lists, feature_list_lengths)``: every output has a
    leading batch dimension, ``FixedLenSequenceFeature`` lists are padded
    to the longest, and their lengths (int64 ``[batch]``) are the third dict."""
    return _parse_sequence(serialized, context_features, sequence_features, True)


# ---------------------------------------------------------------- images


def _image(op_type, image):
    x = convert_to_tensor(image)
    return _op(x.graph, op_type, [x])


_DECODE_DTYPES = {"jpeg": ("uint8",), "png": ("uint8", "uint16"), "any": ("uint8", "uint16", "float32")}
_DECODE_OPS = {"jpeg": "DecodeJpeg", "png": "DecodePng", "any": "DecodeImage"}


def _decode_image(contents, fmt, channels, dtype=uint8, expand_animations=True, ratio=1,
                  fancy_upscaling=True, try_recover_truncated=False, acceptable_fraction=1, dct_method=""):
    """One of TensorFlow's decode ops. The attributes are checked when the
    op runs (InvalidArgumentError), as TensorFlow's kernels check them; a
    dtype the op cannot decode to is a TypeError when built, as in
    TensorFlow."""
    x = convert_to_tensor(contents)
    dtype = as_dtype(dtype)
    allowed = _DECODE_DTYPES[fmt]
    if dtype.name not in allowed:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of "
                        f"allowed values: {', '.join(allowed)}")
    if x.dtype != string:
        raise TypeError(f"Input 'contents' of '{_DECODE_OPS[fmt]}' Op has type {x.dtype.name} that does not "
                        "match expected type of string.")
    return _op(x.graph, "DecodeImage", [x], format=fmt, channels=operator.index(channels or 0), dtype=dtype.name,
               expand_animations=bool(expand_animations), ratio=operator.index(ratio),
               fancy_upscaling=bool(fancy_upscaling), try_recover_truncated=bool(try_recover_truncated),
               acceptable_fraction=float(acceptable_fraction), dct_method=str(dct_method))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """``tf.io.decode_jpeg``: decodes a JPEG, PNG or single-frame GIF (the
    JPEG attributes apply to JPEG data only) to uint8 ``[h, w, c]``."""
    return _decode_image(contents, "jpeg", channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                         try_recover_truncated=try_recover_truncated,
                         acceptable_fraction=acceptable_fraction, dct_method=dct_method)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """``tf.image.decode_and_crop_jpeg``: :func:`decode_jpeg` then the
    window ``[y, x, height, width]`` (an int32 vector) of the image (the
    pixels TensorFlow's cropped decode gives); a window outside the image
    fails when run (InvalidArgumentError). A constant window gives the
    static height and width."""
    image = decode_jpeg(contents, channels, ratio, fancy_upscaling, try_recover_truncated,
                        acceptable_fraction, dct_method)
    g = image.graph
    with g.as_default():
        window = crop_window if isinstance(crop_window, Tensor) else convert_to_tensor(crop_window, dtype=int32)
        if window.dtype != int32:
            raise TypeError(f"Input 'crop_window' of 'DecodeAndCropJpeg' Op has type {window.dtype.name} that "
                            "does not match expected type of int32.")
        dims = window.shape.dims
        if dims is not None and (len(dims) != 1 or dims[0] not in (None, 4)):
            raise ValueError(f"crop_window must be a vector of 4 values, got shape {window.shape}")
        known = _static_ints(window)
        parts = ([convert_to_tensor(v, dtype=int32) for v in known] if known is not None
                 else [window[k] for k in range(4)])
    return _op(g, "CropToBoxInputs", [image, *parts])


def extract_jpeg_shape(contents, output_type=int32, name=None):
    """``tf.image.extract_jpeg_shape``: ``[height, width, channels]`` of a
    JPEG from its header (int32 or int64); data that is not a JPEG fails
    when run (InvalidArgumentError)."""
    x = convert_to_tensor(contents)
    dtype = as_dtype(output_type)
    if dtype.name not in ("int32", "int64"):
        raise TypeError(f"Value passed to parameter 'output_type' has DataType {dtype.name} not in list of "
                        "allowed values: int32, int64")
    if x.dtype != string:
        raise TypeError(f"Input 'contents' of 'ExtractJpegShape' Op has type {x.dtype.name} that does not "
                        "match expected type of string.")
    return _op(x.graph, "ExtractJpegShape", [x], dtype=dtype.name)


def decode_png(contents, channels=0, dtype=uint8, name=None):
    """``tf.io.decode_png``: decodes a PNG, JPEG or single-frame GIF to
    uint8 or uint16 ``[h, w, c]``."""
    return _decode_image(contents, "png", channels, dtype)


def decode_image(contents, channels=None, dtype=uint8, name=None, expand_animations=True):
    """``tf.io.decode_image``: JPEG, PNG, GIF or BMP. uint8, uint16 and
    float32 are decoded directly; another dtype is the uint16 decoding
    through ``convert_image_dtype``, as in TensorFlow."""
    dtype = as_dtype(dtype)
    direct = dtype.name in _DECODE_DTYPES["any"]
    image = _decode_image(contents, "any", channels, dtype if direct else "uint16", expand_animations)
    return image if direct else _convert_image_dtype(image, dtype)


def _convert_image_dtype(image, dtype):
    """:func:`convert_image_dtype` without saturation (``decode_image``'s
    conversion)."""
    return convert_image_dtype(image, dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``, with TensorFlow's arithmetic:
    integers scale to floats by ``1 / max`` in the float dtype, floats to
    integers by ``max + 0.5`` then a cast (``saturate``: clamped first to
    the integer range, as ``tf.saturate_cast``), integers to integers by
    a power of two; floats to floats are a cast."""
    from . import _graph

    image = convert_to_tensor(image)
    dtype = as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if image.dtype == dtype:
        return _graph.identity(image)
    if image.dtype.is_floating and dtype.is_floating:
        return _graph.cast(image, dtype)
    if image.dtype.is_integer and dtype.is_floating:
        in_max = int(np.iinfo(image.dtype.as_numpy_dtype).max)
        return _graph.multiply(_graph.cast(image, dtype), 1.0 / in_max)
    in_max = _dtype_max(image.dtype)
    out_max = int(np.iinfo(dtype.as_numpy_dtype).max)
    if image.dtype.is_floating:
        scaled = _graph.multiply(image, out_max + 0.5)
        if saturate:
            return _saturate_cast(scaled, dtype)
        if dtype.name in ("int8", "uint8", "int16", "uint16"):
            # TensorFlow's cast to a narrow integer truncates through
            # int32: a value out of range wraps (-0.5 → uint8 129).
            scaled = _graph.cast(scaled, int32)
        return _graph.cast(scaled, dtype)
    if in_max > out_max:
        scaled = _graph.floordiv(image, (in_max + 1) // (out_max + 1))
        return _saturate_cast(scaled, dtype) if saturate else _graph.cast(scaled, dtype)
    cast = _saturate_cast(image, dtype) if saturate else _graph.cast(image, dtype)
    return _graph.multiply(cast, (out_max + 1) // (in_max + 1))


def _dtype_max(dtype):
    np_type = dtype.as_numpy_dtype
    return int(np.iinfo(np_type).max) if dtype.is_integer else float(np.finfo(np_type).max)


def _saturate_cast(x, dtype):
    """``tf.saturate_cast``: ``x`` clamped to the range of ``dtype`` (the
    bounds as ``x``'s dtype holds them, rounded inwards) then cast."""
    from . import _graph

    info = np.iinfo(dtype.as_numpy_dtype)
    in_type = x.dtype.as_numpy_dtype
    if x.dtype.is_integer:
        in_info = np.iinfo(in_type)
        if in_info.min < info.min:
            x = _graph.maximum(x, np.asarray(info.min).astype(in_type))
        if in_info.max > info.max:
            x = _graph.minimum(x, np.asarray(info.max).astype(in_type))
        return _graph.cast(x, dtype)
    lo, hi = in_type(info.min), in_type(info.max)
    if int(hi) > info.max:
        hi = np.nextafter(hi, in_type(0))
    if int(lo) < info.min:
        lo = np.nextafter(lo, in_type(0))
    return _graph.cast(_graph.minimum(_graph.maximum(x, lo), hi), dtype)


def _as_float_image(image):
    """The image as TensorFlow's adjust ops take it: float16 and float32
    as they are, another dtype through ``convert_image_dtype`` to
    float32."""
    if image.dtype.name in ("float16", "float32"):
        return image
    return convert_image_dtype(image, float32)


def adjust_brightness(image, delta):
    """``tf.image.adjust_brightness``: ``delta`` added to the image as
    floats, converted back to its dtype with saturation."""
    from . import _graph

    image = convert_to_tensor(image)
    flt = _as_float_image(image)
    adjusted = _graph.add(flt, _graph.cast(delta, flt.dtype) if isinstance(delta, Tensor) else delta)
    return convert_image_dtype(adjusted, image.dtype, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: a delta drawn uniformly from
    ``[-max_delta, max_delta)`` on each run."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_brightness(image, _random_uniform(image.graph, -max_delta, max_delta, seed))


def _random_uniform(g, lo, hi, seed):
    """A float32 scalar uniform in ``[lo, hi)`` drawn on each run (``lo``
    itself when the range is empty, as TensorFlow's ``lo + (hi - lo) * u``)."""
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    if not lo < hi:
        with g.as_default():
            return constant(lo, dtype=float32)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InvalidArgumentValueError(None, None, f"random_uniform: need minval < maxval, got {lo} and {hi}")
    with _next_name(g, "random_uniform"):
        return _op(g, "RandomUniform", [], dims=[], dtype="float32", min=lo, max=hi, seed=_random_seed(g, seed))


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: TensorFlow's ``AdjustContrastv2`` on
    the image as float32, converted back with saturation."""
    images = convert_to_tensor(images)
    shape = images.shape.dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"Shape must be at least rank 3 but is rank {len(shape)}")
    flt = _as_float_image(images)
    if flt.dtype != float32:
        raise TypeError("adjust_contrast: a float16 image is not supported by feedstock")
    g = flt.graph
    factor = _factor(g, contrast_factor, "contrast_factor", "AdjustContrastv2")
    adjusted = _op(g, "Adjust", [flt, factor], op="contrast")
    return convert_image_dtype(adjusted, images.dtype, saturate=True)


def _factor(g, value, arg, op):
    """An adjust op's float32 factor; a tensor of another dtype is
    TensorFlow's TypeError."""
    if isinstance(value, Tensor) and value.dtype != float32:
        raise TypeError(f"Input '{arg}' of '{op}' Op has type {value.dtype.name} that does not match "
                        "expected type of float32.")
    with g.as_default():
        return convert_to_tensor(value, dtype=float32)


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: a factor drawn uniformly from
    ``[lower, upper)`` on each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_contrast(image, _random_uniform(image.graph, lower, upper, seed))


def _adjust_hsv(op, image, factor):
    """TensorFlow's ``AdjustHue`` / ``AdjustSaturation`` on the image as
    float32, converted back to its dtype without saturation (as
    TensorFlow's ``adjust_hue`` and ``adjust_saturation``)."""
    image = convert_to_tensor(image)
    shape = image.shape.dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"Shape must be at least rank 3 but is rank {len(shape)}")
    flt = _as_float_image(image)
    if flt.dtype != float32:
        raise TypeError(f"adjust_{op}: a float16 image is not supported by feedstock")
    g = flt.graph
    factor = _factor(g, factor, *{"hue": ("delta", "AdjustHue"), "saturation": ("scale", "AdjustSaturation")}[op])
    adjusted = _op(g, "Adjust", [flt, factor], op=op)
    return convert_image_dtype(adjusted, image.dtype)


def adjust_hue(image, delta, name=None):
    """``tf.image.adjust_hue``: the hue of each RGB pixel turned by
    ``delta`` (in ``[-1, 1]``), TensorFlow's kernel bit for bit."""
    return _adjust_hsv("hue", image, delta)


def adjust_saturation(image, saturation_factor, name=None):
    """``tf.image.adjust_saturation``: each RGB pixel's saturation scaled
    by ``saturation_factor`` (clamped to [0, 1]) in HSV."""
    return _adjust_hsv("saturation", image, saturation_factor)


def random_hue(image, max_delta, seed=None):
    """``tf.image.random_hue``: a delta drawn uniformly from
    ``[-max_delta, max_delta)`` on each run."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_hue(image, _random_uniform(image.graph, -max_delta, max_delta, seed))


def random_saturation(image, lower, upper, seed=None):
    """``tf.image.random_saturation``: a factor drawn uniformly from
    ``[lower, upper)`` on each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_saturation(image, _random_uniform(image.graph, lower, upper, seed))


def _known_int(v):
    """A box argument's value if known when building (a Python or numpy
    int, or a constant scalar tensor), else ``None``."""
    if isinstance(v, Tensor):
        if v._const is None:
            return None
        v = v._const
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.item()
    return operator.index(v)


def _static_box_int(v, what):
    """A box argument that must be known when building."""
    known = _known_int(v)
    if known is None:
        raise NotImplementedError(f"feedstock needs {what} known when the graph is built")
    return known


def _box_tensors(g, values):
    """Box arguments as int32 scalar tensors (tensors kept as they are)."""
    with g.as_default():
        return [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in values]


def _image_rank_3_or_4(image):
    shape = image.shape.dims
    if shape is not None and len(shape) not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if shape is not None and 0 in shape[-3:]:
        raise ValueError("inner 3 dims of 'image.shape' must be > 0.")
    return shape


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.pad_to_bounding_box``: the image at the offset in a
    target-size image of zeros; what is known when built is checked then
    (ValueError), the rest when run (InvalidArgumentError), as
    TensorFlow's assertions."""
    image = convert_to_tensor(image)
    shape = _image_rank_3_or_4(image)
    box = (offset_height, offset_width, target_height, target_width)
    oh, ow, th, tw = (_known_int(v) for v in box)
    if oh is not None and oh < 0:
        raise ValueError("offset_height must be >= 0")
    if ow is not None and ow < 0:
        raise ValueError("offset_width must be >= 0")
    h, w = (shape[-3], shape[-2]) if shape is not None else (None, None)
    if None not in (w, tw, ow) and tw - ow - w < 0:
        raise ValueError("width must be <= target - offset")
    if None not in (h, th, oh) and th - oh - h < 0:
        raise ValueError("height must be <= target - offset")
    g = image.graph
    if None in (oh, ow, th, tw):
        return _op(g, "PadToBoxInputs", [image, *_box_tensors(g, box)])
    if th < 0 or tw < 0:
        raise ValueError("width must be <= target - offset")
    return _op(g, "PadToBox", [image], offset_height=oh, offset_width=ow, target_height=th, target_width=tw)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """``tf.image.resize_image_with_crop_or_pad``: centrally cropped
    and/or zero-padded to the target size, decided when run from the
    image's size; a target given as a tensor is checked when run."""
    image = convert_to_tensor(image)
    _image_rank_3_or_4(image)
    th, tw = _known_int(target_height), _known_int(target_width)
    if tw is not None and tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th is not None and th <= 0:
        raise ValueError("target_height must be > 0.")
    g = image.graph
    if th is None or tw is None:
        parts = _box_tensors(g, (target_height, target_width))
        return _op(g, "CropOrPadInputs", [image, *parts])
    return _op(g, "CropOrPad", [image], target_height=th, target_width=tw)


def central_crop(image, central_fraction):
    """``tf.image.central_crop``: the central ``central_fraction`` of the
    image's height and width (the offsets ``int((d - d * f) / 2)`` as
    TensorFlow computes them in float64), of an image whose size is
    known or not."""
    image = convert_to_tensor(image)
    f = central_fraction._const if isinstance(central_fraction, Tensor) else central_fraction
    if f is None:
        raise NotImplementedError("feedstock needs central_fraction known when the graph is built")
    f = float(np.asarray(f).item()) if isinstance(f, (np.ndarray, np.generic)) else f
    if f <= 0.0 or f > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if f == 1.0:
        return image
    shape = image.shape.dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    if shape is None or len(shape) not in (3, 4):
        raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. "
                         f"Had rank = {None if shape is None else len(shape)}.")
    g = image.graph
    return _op(g, "CentralCrop", [image], fraction=float(f))


def transpose_image(image):
    """``tf.image.transpose_image`` (``tf.image.transpose``): height and
    width swapped, of an image or a batch."""
    from . import _graph

    image = convert_to_tensor(image)
    shape = _image_rank_3_or_4(image)
    if shape is None:
        raise ValueError("'image' (shape <unknown>) must have either 3 or 4 dimensions.")
    return _graph.transpose(image, [1, 0, 2] if len(shape) == 3 else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """``tf.image.rot90``: ``k`` quarter turns counter-clockwise, as
    TensorFlow composes them (a flip and a transpose); ``k`` must be
    known when the graph is built."""
    from . import _graph

    image = convert_to_tensor(image)
    shape = image.shape.dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    shape = _image_rank_3_or_4(image)
    if shape is None:
        raise ValueError("'image' (shape <unknown>) must have either 3 or 4 dimensions.")
    k = _static_box_int(k, "k") % 4
    if k == 1:
        out = transpose_image(flip_left_right(image))
    elif k == 2:
        out = flip_up_down(flip_left_right(image))
    elif k == 3:
        out = flip_left_right(transpose_image(image))
    else:
        out = image
    # TensorFlow chooses the turn when run (a case on k): the height and
    # width are unknown statically, whatever k.
    static = shape[:-3] + [None, None, shape[-1]]
    return _graph.placeholder_with_default(out, static)


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image flipped top to bottom
    with probability 1/2, drawn each run."""
    x = convert_to_tensor(image)
    return _op(x.graph, "RandomFlip", [x], up_down=True, seed=_random_seed(x.graph, seed))


class ResizeMethod:
    """``tf.image.ResizeMethod`` of TensorFlow 1 (``ResizeMethodV1``)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _resize_size(g, size):
    """A resize's ``size`` as an int32 ``[height, width]`` tensor and what
    is known of it when built (``[h or None, w or None]``)."""
    static = [None, None]
    with g.as_default():
        if isinstance(size, (list, tuple)) and any(isinstance(v, Tensor) for v in size):
            # TensorFlow packs a list holding tensors; each constant part
            # is known statically.
            static = [_static_ints([v])[0] if _static_ints([v]) is not None else None for v in size]
            size = stack([v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in size])
        elif not isinstance(size, Tensor):
            try:
                size = convert_to_tensor(size, dtype=int32)
            except (TypeError, ValueError) as e:
                raise ValueError("'size' must be a 1-D int32 Tensor") from e
    if size.dtype != int32:
        raise ValueError("'size' must be a 1-D int32 Tensor")
    dims = size.shape.dims
    if dims is not None and (len(dims) != 1 or dims[0] not in (None, 2)):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    known = _static_ints(size) if size._const is not None else None
    if known is not None:
        static = known
    return size, [v if v is not None and v > 0 else None for v in static]


def _resize_op(images, size, bilinear, align_corners, half_pixel_centers):
    """TensorFlow's ``ResizeBilinear`` / ``ResizeNearestNeighbor`` on 4-D
    images: ``size`` an int32 ``[height, width]`` (what is constant gives
    the static shape)."""
    g = images.graph
    size, static = _resize_size(g, size)
    return _op(g, "Resize", [images, size], bilinear=bilinear, align_corners=bool(align_corners),
               half_pixel_centers=bool(half_pixel_centers), static_height=static[0], static_width=static[1])


def _rank4_images(images):
    images = convert_to_tensor(images)
    shape = images.shape.dims
    if shape is not None and len(shape) != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {len(shape)}")
    return images


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_bilinear`` (TensorFlow's ``ResizeBilinear``):
    4-D images to float32, bit for bit TensorFlow's."""
    return _resize_op(_rank4_images(images), size, True, align_corners, half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_nearest_neighbor``: 4-D images, keeping their
    dtype."""
    return _resize_op(_rank4_images(images), size, False, align_corners, half_pixel_centers)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """``tf.image.resize_images`` (TensorFlow 1's ``tf.image.resize``):
    an image or a batch; bilinear gives float32, nearest neighbour the
    input's dtype; a size equal to the known size returns the images
    unchanged, as TensorFlow does. ``method`` is a ``ResizeMethod`` (an
    integer 0..3); bicubic and area resizing give float32 too."""
    images = convert_to_tensor(images)
    shape = images.shape.dims
    if shape is None:
        raise ValueError("'images' contains no shape.")
    if len(shape) not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR,
                      ResizeMethod.BICUBIC, ResizeMethod.AREA):
        raise ValueError(f"Resize method is not implemented: {method}")
    height, width = shape[-3], shape[-2]
    known = _static_ints(size)
    if preserve_aspect_ratio:
        if known is None or height is None or width is None:
            raise NotImplementedError("feedstock's preserve_aspect_ratio needs the sizes known when built")
        f = min(np.float32(known[0]) / np.float32(height), np.float32(known[1]) / np.float32(width))
        known = [int(np.round(f * np.float32(height))), int(np.round(f * np.float32(width)))]
        size = known
    if known is not None and len(known) == 2 and [height, width] == known:
        return images
    for v in known or ():
        if v < 0:  # TensorFlow's set_shape of the output
            raise ValueError(f"Dimension {v} must be >= 0")
    single = len(shape) == 3
    batch = images[None] if single else images
    if method == ResizeMethod.BICUBIC:
        out = resize_bicubic(batch, size, align_corners)
    elif method == ResizeMethod.AREA:
        out = resize_area(batch, size, align_corners)
    else:
        out = _resize_op(batch, size, method == ResizeMethod.BILINEAR, align_corners, False)
    return out[0] if single else out
    return out


# ------------------------------------------- image ops: resize, colour, gamma


def _resize_extra(op_type, images, size, **attrs):
    """TensorFlow's ``ResizeBicubic`` / ``ResizeArea`` on 4-D images."""
    from ._graph import _op

    images = _rank4_images(images)
    g = images.graph
    size, static = _resize_size(g, size)
    known = [-1 if v is None else v for v in static]
    return _op(g, op_type, [images, size], static_size=known, **attrs)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_bicubic`` (TensorFlow's ``ResizeBicubic``): 4-D
    images to float32, bit for bit TensorFlow's; ``half_pixel_centers``
    uses Keys' cubic (TensorFlow 2's ``tf.image.resize`` bicubic)."""
    return _resize_extra("ResizeBicubic", images, size, align_corners=bool(align_corners),
                         half_pixel_centers=bool(half_pixel_centers))


def resize_area(images, size, align_corners=False, name=None):
    """``tf.image.resize_area`` (TensorFlow's ``ResizeArea``): each output
    pixel the mean of the source area it covers, float32, bit for bit
    TensorFlow's."""
    return _resize_extra("ResizeArea", images, size, align_corners=bool(align_corners))


def _colour_op(op_type, images):
    from ._graph import _op

    images = convert_to_tensor(images)
    return _op(images.graph, op_type, [images])


def rgb_to_hsv(images, name=None):
    """``tf.image.rgb_to_hsv`` (TensorFlow's ``RGBToHSV``): RGB pixels in
    [0, 1] (last axis of 3, float32 or float64) as hue, saturation and
    value, bit for bit TensorFlow's."""
    return _colour_op("RGBToHSV", images)


def hsv_to_rgb(images, name=None):
    """``tf.image.hsv_to_rgb`` (TensorFlow's ``HSVToRGB``), bit for bit
    TensorFlow's."""
    return _colour_op("HSVToRGB", images)


def adjust_gamma(image, gamma=1, gain=1):
    """``tf.image.adjust_gamma``: ``gain * image ** gamma`` on a float16 or
    float32 image, any other converted to float32 as TensorFlow does (and
    back with saturation). A negative ``gamma`` known when built raises
    ValueError; one given as a tensor fails when run. The power is the
    platform's ``powf``: TensorFlow's vectorised ``pow`` can differ from it
    by one unit in the last place."""
    from ._graph import _op

    image = convert_to_tensor(image)
    known = gamma._const if isinstance(gamma, Tensor) else gamma
    if not isinstance(gamma, Tensor) and known is not None and np.asarray(known).item() < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    orig = image.dtype
    flt = image if orig.name in ("float16", "float32") else convert_image_dtype(image, float32)
    g = flt.graph
    with g.as_default():
        gamma_t = gamma if isinstance(gamma, Tensor) else convert_to_tensor(gamma, dtype=flt.dtype)
        gain_t = gain if isinstance(gain, Tensor) else convert_to_tensor(gain, dtype=flt.dtype)
    adjusted = _op(g, "AdjustGamma", [flt, gamma_t, gain_t])
    return convert_image_dtype(adjusted, orig, saturate=True)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """``tf.image.draw_bounding_boxes``: the boxes' one-pixel outlines
    (``[ymin, xmin, ymax, xmax]`` in [0, 1]) over float32 or float16
    images ``[batch, height, width, 1|3|4]``, box ``k`` in colour ``k``
    of ``colors`` (cycled) or of TensorFlow's default table, bit for bit
    TensorFlow's kernel (an inverted box or one wholly outside is
    skipped; edges outside the image are not drawn). An array given for
    ``images`` is converted to float32 unless it is float16, as
    TensorFlow's op does."""
    from ._graph import _op

    def as_float(x):
        if isinstance(x, Tensor) or getattr(x, "dtype", None) == np.float16:
            return convert_to_tensor(x)
        return convert_to_tensor(x, dtype=float32)

    images = as_float(images)
    inputs = [images, as_float(boxes)] + ([] if colors is None else [as_float(colors)])
    return _op(images.graph, "DrawBoundingBoxes", inputs)


def encode_png(image, compression=-1, name=None):
    """``tf.image.encode_png`` (TensorFlow's ``EncodePng``): a 3-D uint8
    or uint16 image with 1 to 4 channels as the bytes of a PNG (a string
    scalar); ``decode_png`` of it gives the image back exactly. The bytes
    are feedstock's encoder's, not TensorFlow's."""
    from ._graph import _op

    if not isinstance(image, Tensor):
        uint16 = getattr(image, "dtype", None) == np.uint16
        image = convert_to_tensor(image) if uint16 else convert_to_tensor(image, dtype=uint8)
    return _op(image.graph, "EncodePng", [image], compression=int(compression))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """``tf.image.encode_jpeg`` (TensorFlow's ``EncodeJpeg``): a 3-D uint8
    image with 1 or 3 channels as the bytes of a JPEG, libjpeg set up as
    TensorFlow sets it up (libjpeg-turbo's defaults, then quality,
    progression, chroma subsampling, density, XMP metadata)."""
    from ._graph import _op

    if format not in ("", "grayscale", "rgb"):
        raise ValueError(f"Attr 'format' of 'EncodeJpeg' Op passed string '{format}' not in: "
                         '"", "grayscale", "rgb".')
    if density_unit not in ("in", "cm"):
        raise ValueError(f"Attr 'density_unit' of 'EncodeJpeg' Op passed string '{density_unit}' not in: "
                         '"in", "cm".')
    if not isinstance(image, Tensor):
        image = convert_to_tensor(image, dtype=uint8)
    xmp = xmp_metadata.encode() if isinstance(xmp_metadata, str) else bytes(xmp_metadata)
    return _op(image.graph, "EncodeJpeg", [image], format=format, quality=int(quality),
               progressive=bool(progressive), optimize_size=bool(optimize_size),
               chroma_downsampling=bool(chroma_downsampling), density_unit=density_unit,
               x_density=int(x_density), y_density=int(y_density), xmp_metadata=xmp)


def _pair_attr(values):
    """A two-float attribute; another length becomes an invalid pair, so
    that the op fails when run, as TensorFlow's kernel does."""
    values = [float(v) for v in values]
    return values if len(values) == 2 else [0.0, 0.0]


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """``tf.image.sample_distorted_bounding_box`` (TensorFlow's
    ``SampleDistortedBoundingBoxV2``): ``(begin, size, bboxes)`` of a random
    crop covering at least ``min_object_covered`` of some box, drawn on
    each run (feedstock's own random numbers). Shapes and dtypes are
    TensorFlow's; bad boxes and settings fail when run
    (InvalidArgumentError), as there."""
    size = convert_to_tensor(image_size)
    g = size.graph
    with g.as_default():
        boxes = convert_to_tensor(bounding_boxes, dtype=float32)
        covered = convert_to_tensor(min_object_covered, dtype=float32)
    attempts = 100 if max_attempts is None else int(max_attempts)
    outs = _ops(g, "SampleBox", [size, boxes, covered],
                aspect_ratio_range=_pair_attr([0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range),
                area_range=_pair_attr([0.05, 1.0] if area_range is None else area_range),
                max_attempts=max(attempts, 0),
                use_image_if_no_bounding_boxes=bool(use_image_if_no_bounding_boxes),
                seed=_random_seed(g, seed))
    return tuple(outs)


_RGB_WEIGHTS = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images, name=None):
    """``tf.image.rgb_to_grayscale``: ``r·0.2989 + g·0.5870 + b·0.1140``
    in float32 (summed in that order, TensorFlow's bits), converted back
    to the image's dtype (without saturation, as TensorFlow)."""
    from . import _graph

    images = convert_to_tensor(images)
    shape = images.shape.dims
    if shape is not None and (not shape or shape[-1] not in (None, 3)):
        raise ValueError(f"Dimensions must be equal, but are {shape[-1] if shape else 0} and 3 "
                         f"for 'Tensordot/MatMul' with input shapes: {images.shape}, [3].")
    flt = convert_image_dtype(images, float32)
    parts = [_graph.multiply(flt[..., k:k + 1], w) for k, w in enumerate(_RGB_WEIGHTS)]
    gray = _graph.add(_graph.add(parts[0], parts[1]), parts[2])
    return convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images, name=None):
    """``tf.image.grayscale_to_rgb``: the one channel repeated three
    times."""
    from . import _graph

    if not isinstance(images, Tensor):
        # TensorFlow reads the static shape before converting the value.
        images.get_shape()  # the AttributeError TensorFlow raises
    shape = images.shape.dims
    if shape is not None:
        if len(shape) < 2:
            raise ValueError(f"A grayscale image (shape {images.shape}) must be at least two-dimensional.")
        if shape[-1] is not None and shape[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        return _graph.concat([images] * 3, len(shape) - 1)
    raise NotImplementedError("feedstock's grayscale_to_rgb needs the image's rank known when built")


def flip_left_right(image):
    return _image("FlipLeftRight", image)


def flip_up_down(image):
    return _image("FlipUpDown", image)


def per_image_standardization(image):
    return _image("PerImageStandardization", image)


def random_flip_left_right(image, seed=None):
    x = convert_to_tensor(image)
    return _op(x.graph, "RandomFlip", [x], up_down=False, seed=_random_seed(x.graph, seed))


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box`` of an image or a batch of images;
    a negative offset, an empty box, or a box outside the image's known
    size is a ValueError when built, as in TensorFlow. A box given as
    tensors (constant or computed) is checked when run
    (``InvalidArgumentError``, TensorFlow's assertion messages)."""
    x = convert_to_tensor(image)
    box = [v if isinstance(v, Tensor) else operator.index(v)
           for v in (offset_height, offset_width, target_height, target_width)]
    # What TensorFlow can decide from Python ints it refuses when built.
    for name, v in zip(("offset_height", "offset_width"), box):
        if isinstance(v, int) and v < 0:
            raise ValueError(f"{name} must be >= 0.")
    for name, v in zip(("target_height", "target_width"), box[2:]):
        if isinstance(v, int) and v <= 0:
            raise ValueError(f"{name} must be > 0.")
    if all(isinstance(v, int) for v in box):
        oh, ow, th, tw = box
        return _op(x.graph, "CropToBox", [x], offset_height=oh, offset_width=ow, target_height=th,
                   target_width=tw)
    # The rest is checked when run, as TensorFlow's assertions are.
    with x.graph.as_default():
        parts = [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in box]
    return _op(x.graph, "CropToBoxInputs", [x, *parts])


def random_crop(value, size, seed=None, name=None):
    """``tf.image.random_crop``: a random ``size`` crop of ``value``.
    ``size`` is a list of ints or scalar tensors, or an int vector
    tensor; a size known when the graph is built gives a known static
    shape, one computed when run unknown dims."""
    x = convert_to_tensor(value)
    g = x.graph
    sizes = _static_ints(size)
    with _next_name(g, name):
        if sizes is not None:
            return _op(g, "RandomCrop", [x], size=list(sizes), seed=_random_seed(g, seed))
        with g.as_default():
            # As TensorFlow converts it: an int32 vector (another dtype is
            # a ValueError).
            size = convert_to_tensor(size if isinstance(size, Tensor) else stack(list(size)), dtype=int32)
        return _op(g, "RandomCrop", [x, size], size=None, seed=_random_seed(g, seed))


def _static_ints(values):
    """``values`` (a list of ints or scalar tensors, or a vector tensor)
    as a list of ints when all are known while building, else ``None``."""
    if isinstance(values, Tensor):
        if values._const is None:
            return None
        values = values._const
    if isinstance(values, np.ndarray):
        values = values.reshape(-1).tolist()
    out = []
    for v in values:
        if isinstance(v, Tensor):
            if v._const is None:
                return None
            v = v._const
        out.append(int(v))
    return out


# ---------------------------------------------------------------- batching


def _as_list(tensors):
    """``(keys, tensors)`` for a list or dict of tensors (a dict's in the
    order of its keys as strings, as TensorFlow sorts them)."""
    if isinstance(tensors, dict):
        keys = sorted(tensors, key=str)
        return keys, [convert_to_tensor(tensors[k]) for k in keys]
    if isinstance(tensors, Tensor):
        return None, [tensors]
    return None, [convert_to_tensor(t) for t in tensors]


def _as_lists(tensors_list, join):
    """``(keys, lists)`` of a batching call's inputs: one list, or with
    ``join`` one per entry of ``tensors_list``, refused as TensorFlow
    refuses them when building (ValueError, TypeError for dtypes)."""
    if not join:
        keys, lst = _as_list(tensors_list)
        if not lst:
            raise ValueError("Expected at least one tensor in batch().")
        return keys, [lst]
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    parts = [_as_list(t) for t in tensors_list]
    keys = parts[0][0]
    if any(k != keys for k, _ in parts):
        raise ValueError("All dictionaries in tensors_list must have the same keys")
    lists = [lst for _, lst in parts]
    if not lists[0]:
        raise ValueError("Expected at least one tensor in batch_join().")
    if any(len(lst) != len(lists[0]) for lst in lists):
        raise ValueError(f"Inconsistent tensor lists: lengths {[len(lst) for lst in lists]}")
    types = [[t.dtype for t in lst] for lst in lists]
    for other in types[1:]:
        if other != types[0]:
            raise TypeError(
                f"Expected types to be consistent: {', '.join(d.name for d in types[0])} vs. "
                f"{', '.join(d.name for d in other)}."
            )
    return keys, lists


def _as_original(original, keys, outs):
    if keys is not None:
        return dict(zip(keys, outs))
    if isinstance(original, Tensor) or len(outs) == 1:
        # TensorFlow's dequeue gives one tensor, not a list, for one
        # component.
        return outs[0]
    return outs


def _int_arg(value, what):
    """``value`` as an int, as TensorFlow takes an int argument: a float
    (or a string) is TypeError, a numpy integer or a bool is fine."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"Expected int for argument '{what}' not {value!r}.") from None


def _batch_size(batch_size):
    """The batch size as an int. TensorFlow takes an int32 tensor too;
    feedstock needs its value when building, so a constant one."""
    if isinstance(batch_size, Tensor):
        if batch_size.dtype != int32 or batch_size.shape.ndims != 0:
            raise TypeError(
                f"batch_size must be an int32 scalar, not {batch_size.dtype.name} of shape {batch_size.shape}")
        if batch_size._const is None:
            raise TypeError("batch_size must be known when the graph is built: a Python int or a constant")
        batch_size = batch_size._const.item()
    n = _int_arg(batch_size, "batch_size")
    if n < 0:
        raise ValueError(f"Input 'n' (batch_size) must be >= 0, but is {n}")
    if n == 0:
        # TensorFlow would make empty batches forever.
        raise ValueError("batch_size must be positive")
    return n


def _capacity(capacity, min_after_dequeue):
    """The queue's capacity: negative is unbounded, as in TensorFlow; a
    shuffling queue's must exceed ``min_after_dequeue``."""
    if isinstance(capacity, Tensor):
        raise TypeError(f"Expected int for argument 'capacity' not {capacity!r}.")
    capacity = int(capacity)
    if min_after_dequeue is not None:
        if isinstance(min_after_dequeue, Tensor):
            raise TypeError(f"Expected int for argument 'min_after_dequeue' not {min_after_dequeue!r}.")
        min_after_dequeue = _int_arg(min_after_dequeue, "min_after_dequeue")
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        if min_after_dequeue < 0:
            # TensorFlow's queue refuses it when run.
            raise errors.InvalidArgumentError(
                None, None, f"min_after_dequeue must be >= 0, not {min_after_dequeue}")
    if capacity == 0:
        raise ValueError("capacity must not be 0")
    return 2**31 - 1 if capacity < 0 else capacity, min_after_dequeue


def _num_threads(num_threads):
    n = _int_arg(num_threads, "num_threads")
    if n <= 0:
        raise ValueError(f"num_threads must be positive, not {n}: no enqueue ops to run")
    return n


def _keep_input(g, keep_input):
    """``keep_input`` as a bool tensor. A Python bool, int or sequence of
    them (ints 0 or 1 per example) is a constant, as TensorFlow converts
    it; its rank is checked by the native builder."""
    if isinstance(keep_input, Tensor):
        if keep_input.dtype != bool_:
            # TensorFlow's graph refuses it when run.
            raise errors.InvalidArgumentError(
                None, None, f"keep_input must be a bool tensor, not {keep_input.dtype.name}")
        return keep_input
    arr = np.asarray(keep_input)
    if arr.dtype.kind in "iu":
        if arr.ndim > 0 and not np.isin(arr, (0, 1)).all():
            raise errors.InvalidArgumentError(None, None, f"keep_input must be 0 or 1 per example, not {arr.tolist()}")
        arr = arr != 0
    elif arr.dtype.kind != "b":
        raise TypeError(f"keep_input must be bool, not {arr.dtype}")
    with g.as_default():
        return constant(arr, dtype=bool_)


def _shapes(shapes, dynamic_pad):
    """The ``shapes`` argument as lists of dims. As TensorFlow's queues,
    only a padding one takes unknown dimensions."""
    if shapes is None:
        return None
    out = [_shape_arg(s) for s in shapes]
    for dims in out:
        if dims is None or (not dynamic_pad and None in dims):
            raise ValueError(f"All shapes must be fully defined: {out}")
    return out


def _batch(tensors_list, join, batch_size, keep_input=None, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False, min_after_dequeue=None, seed=None, name=None):
    """Every batching function: checks the arguments as TensorFlow does
    when building, then adds the native batching node."""
    capacity, min_after_dequeue = _capacity(capacity, min_after_dequeue)
    keys, lists = _as_lists(tensors_list, join)
    batch_size = _batch_size(batch_size)
    num_threads = _num_threads(num_threads)
    g = lists[0][0].graph
    keep = None if keep_input is None else _keep_input(g, keep_input)._o
    # A shape, rank or keep_input refused here is the ValueError
    # TensorFlow raises as it builds (the graph wrapper makes it one).
    outs = g._g.batch(
        [[t._o for t in lst] for lst in lists],
        batch_size,
        keep_input=keep,
        num_threads=num_threads,
        capacity=capacity,
        enqueue_many=bool(enqueue_many),
        shapes=_shapes(shapes, dynamic_pad),
        dynamic_pad=bool(dynamic_pad),
        allow_smaller_final_batch=bool(allow_smaller_final_batch),
        min_after_dequeue=min_after_dequeue,
        seed=_random_seed(g, seed),
        name=name,
    )
    wrapped = _wrap(g, outs)
    stage = name or ("shuffle_batch" if min_after_dequeue is not None else "batch")
    g.add_to_collection(SUMMARIES, ("queue", stage))
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(stage))
    return _as_original(tensors_list[0] if join else tensors_list, keys, wrapped)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` (a list or dict) in ``num_threads`` runner
    threads, in the order they run."""
    return _batch(tensors, False, batch_size, None, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`batch` of the examples ``keep_input`` selects."""
    return _batch(tensors, False, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches several tensor lists, one runner thread each."""
    return _batch(tensors_list, True, batch_size, None, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(tensors_list, True, batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` drawn at random from a queue that keeps at
    least ``min_after_dequeue`` examples while the input lasts."""
    return _batch(tensors, False, batch_size, None, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(tensors, False, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`shuffle_batch` over several tensor lists, one runner thread
    each."""
    return _batch(tensors_list, True, batch_size, None, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    return _batch(tensors_list, True, batch_size, keep_input, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "errors", "np", "operator")]
