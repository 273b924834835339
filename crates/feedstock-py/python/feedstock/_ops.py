"""Producers, readers, decoders, image ops and batching for
``feedstock.compat.v1``: each function adds a node to the default graph
and returns symbolic tensors, with TensorFlow 1's signature."""

from __future__ import annotations

import operator

import numpy as np

from ._graph import (
    SUMMARIES,
    SparseTensor,
    Tensor,
    _wrap,
    _wrap1,
    _const_array,
    _infer_dtype,
    as_dtype,
    bool_,
    constant,
    convert_to_tensor,
    float32,
    get_default_graph,
    int32,
    int64,
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
        self.name = name

    def dequeue(self, name=None):
        o = self.graph._g.dequeue(self._q)
        return _wrap1(self.graph, o[0])

    def dequeue_many(self, n, name=None):
        o = self.graph._g.dequeue_many(self._q, int(n), False)
        return _wrap1(self.graph, o[0])

    def dequeue_up_to(self, n, name=None):
        o = self.graph._g.dequeue_many(self._q, int(n), True)
        return _wrap1(self.graph, o[0])

    def __repr__(self):
        return f"<FIFOQueue '{self.name}'>"


def _seed(seed):
    return None if seed is None else int(seed) & (2**64 - 1)


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
    if isinstance(string_tensor, Tensor):
        if string_tensor._const is not None:
            strings = [s.decode() if isinstance(s, bytes) else str(s) for s in string_tensor._const.reshape(-1)]
        else:
            strings = string_tensor._o
    else:
        strings = [s.decode() if isinstance(s, bytes) else str(s) for s in string_tensor]
        if not strings:
            raise ValueError("string_input_producer requires a non-empty list of strings")
    if shard is None:
        q = g._g.string_input_producer(strings, _epochs(num_epochs), bool(shuffle), _seed(seed), int(capacity), name)
    else:
        index, count = shard
        q = g._g.sharded_string_input_producer(
            strings, int(index), int(count), str(remainder), _epochs(num_epochs), bool(shuffle), _seed(seed),
            int(capacity), name,
        )
    return QueueBase(g, q, string, g._g.queue_name(q))


def input_producer(
    input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
    summary_name=None, name=None, cancel_op=None,
):
    """The rows of ``input_tensor`` to a queue, once per epoch."""
    t = convert_to_tensor(input_tensor)
    g = t.graph
    q = g._g.input_producer(t._o, _epochs(num_epochs), bool(shuffle), _seed(seed), int(capacity), name)
    return QueueBase(g, q, t.dtype, g._g.queue_name(q))


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """The integers ``0..limit`` to a queue, once per epoch."""
    g = get_default_graph()
    q = g._g.range_input_producer(int(limit), _epochs(num_epochs), bool(shuffle), _seed(seed), int(capacity), name)
    return QueueBase(g, q, int32, g._g.queue_name(q))


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """One row of each tensor at a time, the rows shuffled across each
    epoch unless ``shuffle=False``."""
    ts = [convert_to_tensor(t) for t in tensor_list]
    g = ts[0].graph
    outs = g._g.slice_input_producer([t._o for t in ts], _epochs(num_epochs), bool(shuffle), _seed(seed), int(capacity), name)
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
        k, v = self.graph._g.read(self._r, _queue(queue))
        return Tensor(self.graph, k), Tensor(self.graph, v)

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records of one file, as ``(keys,
        values)`` string vectors."""
        k, v = self.graph._g.read_up_to(self._r, _queue(queue), int(num_records))
        return Tensor(self.graph, k), Tensor(self.graph, v)

    @property
    def supports_serialize(self):
        return False


def _queue(q):
    if not isinstance(q, QueueBase):
        raise TypeError(f"a reader reads from a queue (string_input_producer's result), got {type(q).__name__}")
    return q._q


def _compression(options):
    from .tfrecord import TFRecordOptions

    return TFRecordOptions.get_compression_type_string(options)


class TextLineReader(ReaderBase):
    """``tf.TextLineReader``: one record per line (newline removed)."""

    _kind = "text_line"

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(skip_header_lines=int(skip_header_lines or 0))


class FixedLengthRecordReader(ReaderBase):
    """``tf.FixedLengthRecordReader``: records of ``record_bytes``."""

    _kind = "fixed_length"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None, encoding=None):
        super().__init__(
            record_bytes=int(record_bytes),
            header_bytes=int(header_bytes or 0),
            footer_bytes=int(footer_bytes or 0),
            hop_bytes=int(hop_bytes or 0),
            compression=_compression(encoding),
        )


class TFRecordReader(ReaderBase):
    """``tf.TFRecordReader``: the records of TFRecord files.

    A damaged record fails ``DataLossError`` naming the file and offset,
    as in TensorFlow. Beyond TensorFlow, ``skip_corrupt`` (a dict of
    ``max_per_file``, ``max_per_run``, ``max_fraction``, each optional)
    skips damaged regions within that budget instead; the session's
    ``skip_stats()`` counts them."""

    _kind = "tfrecord"

    def __init__(self, name=None, options=None, skip_corrupt=None):
        if skip_corrupt is not None and not isinstance(skip_corrupt, dict):
            raise TypeError(f"skip_corrupt is a dict or None, got {type(skip_corrupt).__name__}")
        super().__init__(compression=_compression(options), skip_corrupt=skip_corrupt)


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
    return _wrap1(x.graph, x.graph._g.decode_raw(x._o, as_dtype(out_type)._native, bool(little_endian)))


class FixedLenFeature:
    """A feature of fixed ``shape`` (``default_value`` when missing;
    without one it is required)."""

    def __init__(self, shape, dtype, default_value=None):
        self.shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape])]
        self.dtype = as_dtype(dtype)
        self.default_value = default_value


class VarLenFeature:
    """A feature of any number of values; parsed as a ``SparseTensor``."""

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)


class SparseFeature:
    """A sparse tensor built from index features and a value feature."""

    def __init__(self, index_key, value_key, dtype, size, already_sorted=False):
        self.index_key = [index_key] if isinstance(index_key, str) else list(index_key)
        self.value_key = value_key
        self.dtype = as_dtype(dtype)
        self.size = [size] if isinstance(size, int) else list(size)
        self.already_sorted = already_sorted


class FixedLenSequenceFeature:
    """Rows of ``shape``, any number of them (``allow_missing=True``)."""

    def __init__(self, shape, dtype, allow_missing=False, default_value=None):
        self.shape = [int(d) for d in shape]
        self.dtype = as_dtype(dtype)
        self.allow_missing = allow_missing
        self.default_value = default_value


def _spec(features):
    entries = []
    for name, f in features.items():
        if isinstance(f, FixedLenFeature):
            d = None
            if f.default_value is not None:
                d = _const_default(f.default_value, f.dtype)
            entries.append(("fixed", name, f.dtype._native, f.shape, d))
        elif isinstance(f, VarLenFeature):
            entries.append(("var_len", name, f.dtype._native))
        elif isinstance(f, SparseFeature):
            entries.append(("sparse", name, f.index_key, f.value_key, f.dtype._native, [int(s) for s in f.size],
                            bool(f.already_sorted)))
        elif isinstance(f, FixedLenSequenceFeature):
            d = None if f.default_value is None else _const_default(f.default_value, f.dtype)
            entries.append(("fixed_sequence", name, f.dtype._native, f.shape, bool(f.allow_missing), d))
        else:
            raise TypeError(f"feature {name!r}: unsupported configuration {type(f).__name__}")
    return entries


def _const_default(v, dtype):
    if dtype == string:
        a = np.asarray(v, dtype=object)
        return np.vectorize(lambda x: x.encode() if isinstance(x, str) else x, otypes=[object])(a) if a.size else a
    return np.asarray(v, dtype=dtype._native)


def _parse(serialized, features, batched):
    s = convert_to_tensor(serialized)
    g = s.graph
    outs = g._g.parse_example(s._o, _spec(features), batched)
    return dict(zip(features.keys(), _wrap(g, outs)))


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
    fixed = [k for k, v in sequence.items() if isinstance(v, FixedLenSequenceFeature)]
    return (dict(zip(context.keys(), _wrap(g, c))), dict(zip(sequence.keys(), _wrap(g, f))),
            dict(zip(fixed, _wrap(g, l))))


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


def _image(op, image):
    x = convert_to_tensor(image)
    return _wrap1(x.graph, x.graph._g.image_op(op, x._o))


def _decode_image(contents, fmt, channels):
    x = convert_to_tensor(contents)
    return _wrap1(x.graph, x.graph._g.decode_image(x._o, fmt, int(channels or 0)))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    return _decode_image(contents, "jpeg", channels)


def decode_png(contents, channels=0, dtype=uint8, name=None):
    if as_dtype(dtype) != uint8:
        raise NotImplementedError("decode_png decodes to uint8 only")
    return _decode_image(contents, "png", channels)


def decode_image(contents, channels=None, dtype=uint8, name=None, expand_animations=True):
    if as_dtype(dtype) != uint8:
        raise NotImplementedError("decode_image decodes to uint8 only")
    return _decode_image(contents, "any", channels)


def flip_left_right(image):
    return _image("flip_left_right", image)


def flip_up_down(image):
    return _image("flip_up_down", image)


def per_image_standardization(image):
    return _image("per_image_standardization", image)


def random_flip_left_right(image, seed=None):
    x = convert_to_tensor(image)
    return _wrap1(x.graph, x.graph._g.random_flip_left_right(x._o, _seed(seed)))


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box`` of an image or a batch of images;
    a negative offset, an empty box, or a box outside the image's known
    size is a ValueError when built, as in TensorFlow."""
    x = convert_to_tensor(image)
    box = [operator.index(v) for v in (offset_height, offset_width, target_height, target_width)]
    for name, v in zip(("offset_height", "offset_width"), box):
        if v < 0:
            raise ValueError(f"{name} must be >= 0.")
    for name, v in zip(("target_height", "target_width"), box[2:]):
        if v <= 0:
            raise ValueError(f"{name} must be > 0.")
    return _wrap1(x.graph, x.graph._g.crop_to_bounding_box(x._o, *box))


def random_crop(value, size, seed=None, name=None):
    x = convert_to_tensor(value)
    return _wrap1(x.graph, x.graph._g.random_crop(x._o, [int(s) for s in size], _seed(seed)))


# ---------------------------------------------------------------- batching


def _as_list(tensors):
    """``(keys, tensors)`` for a list or dict of tensors."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return keys, [convert_to_tensor(tensors[k]) for k in keys]
    if isinstance(tensors, Tensor):
        return None, [tensors]
    return None, [convert_to_tensor(t) for t in tensors]


def _as_original(original, keys, outs):
    if keys is not None:
        return dict(zip(keys, outs))
    if isinstance(original, Tensor) or len(outs) == 1:
        # TensorFlow's dequeue gives one tensor, not a list, for one
        # component.
        return outs[0]
    return outs


def _batch(tensors_list, original, batch_size, keep_input=None, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False, min_after_dequeue=None, seed=None, name=None):
    keys = None
    lists = []
    for t in tensors_list:
        k, lst = _as_list(t)
        keys = k
        lists.append(lst)
    g = lists[0][0].graph
    keep = None
    if keep_input is not None:
        if isinstance(keep_input, Tensor):
            keep = keep_input._o
        else:
            with g.as_default():
                keep = constant(bool(keep_input), dtype=bool_)._o
    outs = g._g.batch(
        [[t._o for t in lst] for lst in lists],
        int(batch_size),
        keep_input=keep,
        num_threads=int(num_threads),
        capacity=int(capacity),
        enqueue_many=bool(enqueue_many),
        shapes=None if shapes is None else [[None if d is None else int(d) for d in s] for s in shapes],
        dynamic_pad=bool(dynamic_pad),
        allow_smaller_final_batch=bool(allow_smaller_final_batch),
        min_after_dequeue=None if min_after_dequeue is None else int(min_after_dequeue),
        seed=_seed(seed),
        name=name,
    )
    wrapped = _wrap(g, outs)
    g.add_to_collection(SUMMARIES, ("queue", name or ("shuffle_batch" if min_after_dequeue is not None else "batch")))
    return _as_original(original, keys, wrapped)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` (a list or dict) in ``num_threads`` runner
    threads, in the order they run."""
    return _batch([tensors], tensors, batch_size, None, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`batch` of the examples ``keep_input`` selects."""
    return _batch([tensors], tensors, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches several tensor lists, one runner thread each."""
    return _batch(tensors_list, tensors_list[0], batch_size, None, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(tensors_list, tensors_list[0], batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` drawn at random from a queue that keeps at
    least ``min_after_dequeue`` examples while the input lasts."""
    return _batch([tensors], tensors, batch_size, None, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch([tensors], tensors, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`shuffle_batch` over several tensor lists, one runner thread
    each."""
    return _batch(tensors_list, tensors_list[0], batch_size, None, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    return _batch(tensors_list, tensors_list[0], batch_size, keep_input, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "np")]
