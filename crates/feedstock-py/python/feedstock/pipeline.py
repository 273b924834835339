"""The Pythonic way in: a pipeline object you iterate.

::

    import feedstock as fs

    spec = {"image_raw": fs.FixedLenFeature([], fs.string),
            "label": fs.FixedLenFeature([], fs.int64)}
    with fs.Pipeline("data/train-*.tfrecord", features=spec, batch_size=128,
                     num_epochs=2, shuffle_buffer=10_000, seed=7) as pipe:
        for batch in pipe:            # a dict of numpy arrays
            train_step(batch["image_raw"], batch["label"])
        print(pipe.stats)

Pipelines run on the engine (``feedstock._native.Dataset``): reader
threads read (TFRecord, text lines, fixed-length records, whole files,
or arrays), parse, run ``map``, shuffle and batch; each batch crosses
into Python without a copy; the order is a function of the data, the
settings and the seed (not of the thread count), and ``state_dict()`` /
``load_state_dict()`` resume exactly::

    state = pipe.state_dict()          # plain values: pickle it
    ...
    pipe = fs.Pipeline(...same arguments...)
    pipe.load_state_dict(state)        # before the first batch
    for batch in pipe: ...             # the batches that came next

``map`` is built once into a graph over placeholders for the example's
components and run natively per example in the reader threads (no GIL);
its checkpoint holds a hash of that graph, so a state is refused by a
Pipeline whose map differs. A map that keeps state between examples (a
random op such as ``random_flip_left_right`` or ``random_uniform``, a
queue, a variable) or calls Python (``py_func``) cannot give the same
values on a resume: such a pipeline, and the TFRecord reader option
``allow_empty_files``, are built as the graph the
``feedstock.compat.v1`` layer builds, run by queue runners; they cannot
checkpoint exactly, and ``state_dict()`` says why. (``skip_corrupt``
runs on the engine: each file is indexed once around its damaged
regions, counted once each in ``skip_stats``.) ``py_map`` is the
slow path: a Python function per example, run in the iterating thread
on each batch (on the engine too, where it must be a pure function of
the example for a resume to give the same values); an exception it
raises reaches the loop.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from . import _graph as g
from . import _native, _shard
from . import _ops as ops
from . import errors

__all__ = ["Pipeline"]


class Pipeline:
    """An input pipeline: files (or arrays) → reader → decoder → ops →
    (shuffle) batch, iterated as dicts or tuples of numpy arrays.

    Sources (one of):
      ``files``: a glob pattern or a list of paths or URLs (``s3://``,
      ``gs://``, ``az://``, ``http(s)://``, ``file://``; a pattern over a
      bucket lists its prefix), read with ``format``
      (``"tfrecord"``, ``"text"``, ``"fixed_length"``, ``"whole_file"``;
      ``reader_options`` passes e.g. ``record_bytes`` or
      ``skip_header_lines``, or for TFRecord ``skip_corrupt``: a dict
      (``max_per_file``, ``max_per_run``, ``max_fraction``, each
      optional) to skip damaged records within that budget, counted in
      ``skip_stats``, instead of failing at the first; ``compression``
      is ``""``, ``"GZIP"`` or ``"ZLIB"``).
      ``arrays``: a dict (or tuple) of equal-length arrays, preloaded and
      shared, one example per row.

    Decoding: ``features`` (a dict of ``FixedLenFeature`` /
    ``VarLenFeature`` / ...) parses ``tf.train.Example`` records; ``map``
    is a function from the example (a dict or tuple of symbolic tensors,
    or the record tensor) to a dict or tuple of symbolic tensors, built
    with ``feedstock.compat.v1`` ops and run natively.

    Batching: ``batch_size``; ``shuffle_buffer`` (TensorFlow's
    ``min_after_dequeue``; ``shuffle=False`` keeps the files' order;
    ``shuffle="global"`` draws a permutation of every record of every
    file each epoch, complete mixing through the record index; arrays
    with ``shuffle=True`` are permuted whole each epoch);
    ``num_threads`` runner threads (default 2 when shuffling, else 1:
    several threads interleave examples); ``drop_remainder`` gives only
    full batches (fixed shapes, for JAX), the examples left over are
    counted in ``stats`` as held back; otherwise the last batch may be
    smaller and every example arrives exactly ``num_epochs`` times.
    ``capacity`` sizes the batching queue of a pipeline run on the graph
    (the engine has none: there it is accepted and has no effect).

    ``keys=True`` adds each example's record key to the batches (under
    ``"__key__"``, or as the last element of a tuple): ``file:offset``
    or ``file:line``; padding added by ``shard(..., remainder="pad")``
    has keys starting ``<pad>``, so that a loop can mask it.
    """

    def __init__(
        self,
        files=None,
        *,
        arrays=None,
        format="tfrecord",  # noqa: A002
        compression=None,
        reader_options=None,
        features=None,
        map=None,  # noqa: A002
        py_map=None,
        batch_size=32,
        num_epochs=1,
        shuffle=True,
        shuffle_buffer=None,
        seed=None,
        num_threads=None,
        capacity=None,
        drop_remainder=False,
        keys=False,
    ):
        if (files is None) == (arrays is None):
            raise ValueError("give exactly one of files and arrays")
        batch_size = _count("batch_size", batch_size, 1)
        num_epochs = _count("num_epochs", num_epochs, 1, none=True)
        shuffle_buffer = _count("shuffle_buffer", shuffle_buffer, 0, none=True)
        num_threads = _count("num_threads", num_threads, 1, none=True)
        capacity = _count("capacity", capacity, 1, none=True)
        if keys and files is None:
            raise ValueError("keys=True needs files: array rows have no record keys")
        if not isinstance(shuffle, bool) and shuffle != "global":
            raise ValueError(f'shuffle must be True, False or "global", not {shuffle!r}')
        self._files = _expand(files) if files is not None else None
        self._arrays = arrays
        self._format = format
        self._compression = compression
        self._reader_options = dict(reader_options or {})
        self._features = features
        self._map = map
        self._py_map = py_map
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self._shuffle = bool(shuffle)
        self._global = shuffle == "global"
        self._explicit_buffer = shuffle_buffer
        if shuffle_buffer is None:
            shuffle_buffer = 10 * self.batch_size if shuffle else 0
        self._min_after_dequeue = shuffle_buffer
        self._seed = seed
        # The engine's seed: the one given, else one drawn now (kept in
        # state_dict(), which a Pipeline built without a seed adopts).
        self._run_seed = int(seed) if seed is not None else int.from_bytes(os.urandom(8), "little")
        # Several runner threads interleave examples: keep one when the
        # order should be kept.
        self._num_threads = num_threads if num_threads is not None else (2 if shuffle else 1)
        self._capacity = capacity
        self._drop_remainder = bool(drop_remainder)
        self._with_keys = bool(keys)
        self._shard = None
        self._elastic = False
        self._shard_counts = None
        self._last_shard_stats = _sum_shard_stats([])
        self._last_skip_stats = None
        self._session = None
        self._coord = None
        self._threads = []
        self._keys = None
        self._graph = None
        self._native = None
        self._records = 0
        self._resume = None
        self._resumed = False
        self._map_fn = None
        self._map_names = None
        self._map_reason = None
        self.batches = 0
        self.examples = 0
        if self._files is not None:
            with g.Graph().as_default():
                self._reader()  # the graph readers' checks of format and reader_options
        if self._global and self._why_not_engine() is not None:
            raise ValueError(f'shuffle="global" runs on the engine, which this pipeline cannot: {self._why_not_engine()}')
        if self._why_not_engine() is not None:
            self._build()

    # ------------------------------------------------------------ building

    @property
    def graph(self):
        """The graph of the pipeline (built when first asked for on
        pipelines that run on the engine, which need none)."""
        if self._graph is None:
            self._build()
        return self._graph

    def _why_not_engine(self):
        """None when the engine runs this pipeline, else why it cannot."""
        if self._arrays is not None:
            if self._shard is not None and self._shard[1] > 1 and self._seed is None and self._engine_shuffle() != "none":
                return "a shuffled shard of arrays needs a seed, the same on every host"
        elif self._format == "tfrecord" and set(self._reader_options) - {"skip_corrupt"}:
            extra = ", ".join(sorted(set(self._reader_options) - {"skip_corrupt"}))
            return f"reader_options {extra} are the graph TFRecord reader's options"
        if self._map is not None:
            self._engine_map()
            return self._map_reason
        return None

    def _reader(self):
        """The graph path's reader for ``format`` and ``reader_options``
        (made in a scratch graph to check them on the engine path:
        TypeError or ValueError as the graph path raises them)."""
        fmt = self._format
        if fmt == "tfrecord":
            return ops.TFRecordReader(options=self._compression, **self._reader_options)
        if fmt == "text":
            return ops.TextLineReader(**self._reader_options)
        if fmt == "fixed_length":
            return ops.FixedLengthRecordReader(encoding=self._compression, **self._reader_options)
        if fmt == "whole_file":
            return ops.WholeFileReader(**self._reader_options)
        raise ValueError(f"unknown format {fmt!r}: tfrecord, text, fixed_length or whole_file")

    def _engine_reader_options(self):
        """``reader_options`` as the native Dataset takes them."""
        o = self._reader_options
        return {
            "skip_header_lines": int(o.get("skip_header_lines") or 0),
            "allow_empty_files": bool(o.get("allow_empty_files", False)),
            "record_bytes": None if o.get("record_bytes") is None else int(o["record_bytes"]),
            "header_bytes": int(o.get("header_bytes") or 0),
            "footer_bytes": int(o.get("footer_bytes") or 0),
            "hop_bytes": int(o.get("hop_bytes") or 0),
            "skip_corrupt": _budget(o.get("skip_corrupt")),
        }

    def _engine_compression(self):
        return self._compression or None

    def _engine_features(self):
        """Whether the engine parses ``features`` (in blocks) before the
        map: when every feature is a FixedLenFeature, fed to the map as
        dense placeholders; otherwise the map's graph parses each record."""
        if self._features is None:
            return False
        if self._map is None:
            return True
        return all(isinstance(f, ops.FixedLenFeature) for f in self._features.values())

    def _engine_map(self):
        """Builds ``map`` once as a graph function of the example's
        components (placeholders), which the engine's reader threads run
        per example; or records in ``_map_reason`` why it cannot run
        there (state kept between examples: a random op, a queue, a
        py_func)."""
        if self._map_fn is not None or self._map_reason is not None:
            return
        graph = g.Graph()
        with graph.as_default():
            inputs, example = self._map_inputs()
            keys, tensors = _structure(self._map(example))
            tensors = [t if isinstance(t, g.Tensor) else g.convert_to_tensor(t) for t in tensors]
        if self._with_keys and keys is not None and "__key__" in keys:
            raise ValueError('keys=True adds "__key__": the example already has one')
        try:
            self._map_fn = _native.GraphFn(graph._g.native, [t._o for t in inputs], [t._o for t in tensors])
        except (errors.FailedPreconditionError, errors.InvalidArgumentError) as e:
            msg = getattr(e, "message", None) or str(e)
            self._map_reason = f"its map= function keeps state between examples or needs Python: {msg}"
            return
        self._map_names = keys

    def _map_inputs(self):
        """Placeholders for one example's components as the engine
        decodes them, and the example the map function is given (as the
        graph path gives it)."""
        if self._arrays is not None:
            names, arrays = _structure(self._arrays)
            arrays = [np.asarray(a) for a in arrays]
            inputs = [g.placeholder(g.as_dtype(a.dtype), list(a.shape[1:])) for a in arrays]
            return inputs, (dict(zip(names, inputs)) if names is not None else tuple(inputs))
        if self._engine_features():
            # The engine parses into the spec's order; the map is given
            # the dict in TensorFlow's, as parse_single_example gives it.
            inputs = [g.placeholder(ops._spec_dtype(name, f), ops._spec_shape(name, f, sequence=False))
                      for name, f in self._features.items()]
            return inputs, ops._in_tf_order(self._features, inputs)
        record = g.placeholder(g.string, [])
        if self._features is not None:
            return [record], ops.parse_single_example(record, self._features)
        return [record], record

    def _engine_shuffle(self):
        if self._global:
            return "global"
        if self._arrays is not None:
            # A permutation of the rows each epoch (what
            # slice_input_producer(shuffle=True) drew).
            return "global" if self._shuffle else "none"
        if self._min_after_dequeue > 0:
            return "buffer"
        return "files" if self._shuffle else "none"

    def _settings(self):
        """The arguments a checkpoint depends on, as plain values."""
        return {
            "source": "arrays" if self._arrays is not None else "files",
            "files": None if self._files is None else list(self._files),
            "format": None if self._files is None else self._format,
            "compression": self._compression,
            "reader_options": sorted((k, repr(v)) for k, v in self._reader_options.items()),
            "features": None if self._features is None else sorted(self._features),
            "map": None if self._map_fn is None else self._map_fn.fingerprint,
            "batch_size": self.batch_size,
            "num_epochs": self.num_epochs,
            "shuffle": self._engine_shuffle(),
            "shuffle_buffer": self._min_after_dequeue if self._engine_shuffle() == "buffer" else 0,
            "drop_remainder": self._drop_remainder,
            "keys": self._with_keys,
            # An elastic state resumes on any host of any number of hosts.
            "shard": None if self._shard is None else (
                ["elastic", self._shard[2]] if self._elastic else list(self._shard)),
        }

    def _native_dataset(self):
        args = dict(
            batch_size=self.batch_size, drop_remainder=self._drop_remainder, num_epochs=self.num_epochs,
            shuffle=self._engine_shuffle(), buffer=self._min_after_dequeue, seed=self._run_seed,
            threads=self._num_threads, keys=self._with_keys,
        )
        if self._shard is not None:
            args["shard"] = self._shard[:2]
            args["remainder"] = self._shard[2]
            args["elastic"] = self._elastic
        if self._map_fn is not None:
            args["map"] = self._map_fn
            args["names"] = self._map_names
        if self._arrays is not None:
            names, arrays = _structure(self._arrays)
            arrays = [np.asarray(a) for a in arrays]
            names = names if names is not None else [str(i) for i in range(len(arrays))]
            cols = [(str(n), a, g.as_dtype(a.dtype)._native) for n, a in zip(names, arrays)]
            self._keys = None if _structure(self._arrays)[0] is None else list(names)
            if self._map_fn is not None:
                self._keys = self._map_names
            self._keys = self._with_key(self._keys)
            return _native.Dataset(arrays=cols, **args)
        features = None
        if self._engine_features():
            features = ops._spec(self._features)
            # The engine's components are in the spec's order.
            self._keys = list(self._features)
        else:
            self._keys = None
        if self._map_fn is not None:
            self._keys = self._map_names
        self._keys = self._with_key(self._keys)
        return _native.Dataset(self._files, format=self._format, compression=self._engine_compression(),
                               reader_options=self._engine_reader_options(), features=features, **args)

    def _with_key(self, keys):
        if self._with_keys and keys is not None:
            return keys + ["__key__"]
        return keys

    def _build(self):
        self._graph = g.Graph()
        with self._graph.as_default():
            key, example = self._source()
            if self._map is not None:
                example = self._map(example)
            keys, tensors = _structure(example)
            if self._with_keys:
                if keys is not None and "__key__" in keys:
                    raise ValueError('keys=True adds "__key__": the example already has one')
                keys = None if keys is None else keys + ["__key__"]
                tensors = tensors + [key]
            self._keys = keys
            cap = self._capacity or self._min_after_dequeue + (self._num_threads + 2) * self.batch_size
            common = dict(
                batch_size=self.batch_size,
                capacity=cap,
                num_threads=self._num_threads,
                allow_smaller_final_batch=not self._drop_remainder,
                name="batch",
            )
            if self._min_after_dequeue > 0:
                out = ops.shuffle_batch(list(tensors), min_after_dequeue=self._min_after_dequeue, seed=self._seed, **common)
            else:
                out = ops.batch(list(tensors), **common)
            self._outputs = [out] if isinstance(out, g.Tensor) else list(out)

    def _source(self):
        epochs = self.num_epochs
        if self._arrays is not None:
            keys, arrays = _structure(self._arrays)
            arrays = [np.asarray(a) for a in arrays]
            if self._shard is not None:
                index, count, remainder = self._shard
                rows, counts = _shard.split_rows(len(arrays[0]), index, count, remainder)
                arrays = [a[rows] for a in arrays]
                self._shard_counts = counts
            consts = [g.constant(a) for a in arrays]
            rows = ops.slice_input_producer(consts, num_epochs=epochs, shuffle=self._shuffle, seed=self._seed)
            return None, (dict(zip(keys, rows)) if keys is not None else tuple(rows))
        shard = remainder = None
        if self._shard is not None:
            shard, remainder = self._shard[:2], self._shard[2]
        q = ops.string_input_producer(
            self._files, num_epochs=epochs, shuffle=self._shuffle, seed=self._seed, shard=shard,
            remainder=remainder or "drop",
        )
        key, value = self._reader().read(q)
        if self._features is not None:
            return key, ops.parse_single_example(value, self._features)
        return key, value

    def shard(self, index, count, remainder="drop", elastic=False):
        """Reads only this host's part of the data: host ``index`` (its
        rank) of ``count`` (the world size). Every host's part is
        disjoint, together they are every record, every epoch, and every
        host gets the same number of examples, hence of batches;
        ``remainder`` is ``"drop"`` (every host stops at the smallest
        part) or ``"pad"`` (every host reads some of its records again up
        to the largest; with files, their keys start ``<pad>``), counted
        in ``shard_stats``. Files are split whole when there are at least
        as many as hosts, else record by record; arrays row by row. With
        ``shuffle`` and several hosts reading files, give the same
        ``seed`` on every host. Call it before iterating; returns the
        pipeline::

            pipe = fs.Pipeline(files, features=spec, seed=7).shard(rank, world)

        ``elastic=True`` makes the parts interleaved (host ``index``
        takes places ``index``, ``index + count``, ... of one order
        every host computes), so that hosts which have taken as many
        batches hold the same ``state_dict()``, and any host's state
        resumes every host of a new world of any size: each calls
        ``load_state_dict(state)`` on a Pipeline built with the same
        arguments and ``shard(j, new_count, elastic=True)``, and the
        rest of the epoch arrives exactly once across them. With a
        shuffle buffer, the buffer is then one global buffer, simulated
        over positions, drained at each epoch's end. Engine pipelines
        only.
        """
        if self._session is not None or self._native is not None:
            raise RuntimeError("shard() must be called before the pipeline starts")
        if remainder not in ("drop", "pad"):
            raise ValueError(f'remainder must be "drop" or "pad", not {remainder!r}')
        _shard.check_index(index, count)
        self._shard = (int(index), int(count), remainder)
        self._elastic = bool(elastic)
        if self._elastic and self._why_not_engine() is not None:
            raise errors.InvalidArgumentError(
                None, None, f"an elastic shard needs a pipeline on the engine: {self._why_not_engine()}")
        if self._why_not_engine() is None:
            if self._files is not None and count > 1 and self._seed is None and self._engine_shuffle() != "none":
                raise errors.InvalidArgumentError(
                    None, None,
                    "a sharded pipeline that shuffles needs a seed, the same on every host: without one, "
                    "each host draws its own order and the parts overlap",
                )
            self._graph = None
        else:
            self._build()
        return self

    @property
    def shard_stats(self):
        """What ``shard``'s remainder policy did, summed over the run so
        far (or the last run): ``{"dropped": n, "padded": n}``; ``None``
        unless sharded. For arrays, the rows left out or repeated in each
        epoch the loop has reached."""
        if self._shard is None:
            return None
        if self._why_not_engine() is None:
            return self._engine_shard_stats()
        if self._arrays is not None:
            # Rows are split before the producer: the same rows are left
            # out (or repeated) in every epoch the loop has reached.
            rows = self._shard_counts["rows"]
            epochs = -(-self.examples // rows) if rows else 0
            return {k: self._shard_counts[k] * epochs for k in ("dropped", "padded")}
        if self._session is not None:
            return _sum_shard_stats(self._session.shard_stats())
        return self._last_shard_stats

    def _engine_shard_stats(self):
        # The engine splits each epoch's order into equal contiguous
        # parts: with "drop" the last records of the order fall after the
        # last host's part; with "pad" the last hosts' parts run past the
        # end and are padded.
        index, count, remainder = self._shard
        n = self._records
        per_host = n // count if remainder == "drop" else -(-n // count)
        epochs = -(-self.examples // per_host) if per_host else 0
        dropped = n - count * per_host if remainder == "drop" and index == count - 1 else 0
        padded = max(0, min(per_host, (index + 1) * per_host - n)) if remainder == "pad" else 0
        return {"dropped": dropped * epochs, "padded": padded * epochs}

    # ------------------------------------------------------------ checkpoints

    def state_dict(self):
        """Where the pipeline is, between two batches, as a dict of plain
        picklable values: a Pipeline built with the same arguments and
        given it by :meth:`load_state_dict` delivers exactly the batches
        this one would have delivered next, in the same order (whatever
        ``num_threads``). Before the first batch, the start (or the
        state loaded). FailedPreconditionError for a pipeline that runs
        on the graph (``map``, ``py_map``, ...), saying why."""
        why = self._why_not_engine()
        if why is not None:
            raise errors.FailedPreconditionError(
                None, None, f"this Pipeline cannot checkpoint exactly: {why}; the position of "
                "examples in its queues is not recorded (build it without them to checkpoint)")
        self._check_fork()
        checkpoint = self._native.checkpoint() if self._native is not None else self._resume
        return {
            "version": _STATE_VERSION,
            "checkpoint": checkpoint,
            "batches": self.batches,
            "examples": self.examples,
            "seed": self._run_seed,
            "settings": self._settings(),
        }

    def load_state_dict(self, state):
        """Continues from ``state`` (of :meth:`state_dict`) at the next
        iteration. Call it before the first batch, on a Pipeline built
        with the same arguments (``num_threads`` may differ; one built
        without a seed takes the state's): InvalidArgumentError naming
        the argument that differs, RuntimeError once iteration began."""
        if self._session is not None or self._native is not None or self.batches:
            raise RuntimeError("load_state_dict() must be called before the first batch, on a fresh Pipeline")
        why = self._why_not_engine()
        if why is not None:
            raise errors.FailedPreconditionError(None, None, f"this Pipeline cannot resume exactly: {why}")
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            got = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise errors.InvalidArgumentError(
                None, None, f"not a Pipeline state of version {_STATE_VERSION} (got {got!r})")
        ours, theirs = self._settings(), state.get("settings", {})
        for k in ours:
            if theirs.get(k) != ours[k]:
                raise errors.InvalidArgumentError(
                    None, None, f"the state is of a Pipeline built with {k}={theirs.get(k)!r}, "
                    f"this one has {k}={ours[k]!r}: resume with the same arguments")
        if self._seed is not None and state["seed"] != self._run_seed:
            raise errors.InvalidArgumentError(
                None, None, f"the state is of a Pipeline built with seed={state['seed']!r}, "
                f"this one has seed={self._seed!r}: resume with the same arguments")
        self._run_seed = int(state["seed"])
        self._resume = state["checkpoint"]
        self._resumed = True
        self.batches = int(state["batches"])
        self.examples = int(state["examples"])

    def _check_fork(self):
        if self._native is not None and self._pid != os.getpid():
            raise errors.FailedPreconditionError(
                None, None,
                f"this Pipeline was started in process {self._pid}; this is a forked child (process "
                f"{os.getpid()}), which cannot use it: the threads that ran it did not survive the fork. "
                "Build the pipeline inside the child (a PyTorch DataLoader worker: in the dataset's "
                '__iter__; see docs/python.md, "DataLoader workers and fork")')

    # ------------------------------------------------------------ running

    def start(self):
        """Starts the runner threads (iteration does it when needed)."""
        if self._why_not_engine() is None:
            if self._native is None:
                native = self._native_dataset()
                native.start(self._resume)
                self._native, self._pid = native, os.getpid()
                self._records = native.records()
                if not self._resumed:
                    self.batches = 0
                    self.examples = 0
                self._resume, self._resumed = None, False
            return self
        if self._session is None:
            self._session = g.Session(graph=self.graph)
            self._coord = g.Coordinator()
            self._threads = g.start_queue_runners(sess=self._session, coord=self._coord)
            self._pid = os.getpid()
            self.batches = 0
            self.examples = 0
        return self

    def stop(self):
        """Stops the runner threads, joins them and raises the first real
        error any of them hit."""
        if self._native is not None:
            native, self._native = self._native, None
            if self._pid == os.getpid():
                try:
                    native.stop()
                finally:
                    self._last_skip_stats = native.skip_stats()
            return
        if self._session is None:
            return
        if self._pid != os.getpid():
            # A forked child: the runners are the parent's, nothing of
            # them runs here (using them raised FailedPreconditionError).
            self._session, self._coord, self._threads = None, None, []
            return
        sess, coord, threads = self._session, self._coord, self._threads
        self._last_shard_stats = _sum_shard_stats(sess.shard_stats())
        self._last_skip_stats = sess.skip_stats()
        self._session, self._coord, self._threads = None, None, []
        coord.request_stop()
        try:
            coord.join(threads, stop_grace_period_secs=10)
        finally:
            sess.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __iter__(self):
        if self._why_not_engine() is None:
            yield from self._iter_engine()
            return
        self.start()
        sess = self._session
        try:
            while True:
                try:
                    values = sess.run(self._outputs)
                except errors.OutOfRangeError:
                    break
                n = _batch_len(values[0])
                self.batches += 1
                self.examples += n
                out = dict(zip(self._keys, values)) if self._keys is not None else tuple(values)
                if self._py_map is not None:
                    out = _apply_per_example(self._py_map, out, n)
                yield out
        finally:
            # Ending the iteration (or breaking out of it) stops the runners.
            self.stop()

    def _iter_engine(self):
        self._check_fork()
        self.start()
        native = self._native
        failed = False
        try:
            while True:
                if self._native is not native:
                    break
                self._check_fork()
                got = native.next()
                if got is None:
                    break
                _, values = got
                n = _batch_len(values[0])
                self.batches += 1
                self.examples += n
                out = dict(zip(self._keys, values)) if self._keys is not None else tuple(values)
                if self._py_map is not None:
                    out = _apply_per_example(self._py_map, out, n)
                yield out
        except BaseException:
            failed = True
            raise
        finally:
            if self._native is native and self._pid == os.getpid():
                self._native = None
                try:
                    native.stop()
                except errors.OpError:
                    # The error that stopped it was raised by next().
                    if not failed:
                        raise
                finally:
                    self._last_skip_stats = native.skip_stats()

    # ------------------------------------------------------------ stats

    @property
    def stats(self):
        """One dict of counters per queue (size, capacity, enqueued,
        dequeued, batches, held_back, filtered, fraction_full); empty when
        not running. On the engine, one dict: name ``"batch"``,
        batch_size, batches and dequeued (examples)."""
        if self._native is not None:
            self._check_fork()
            return [{"name": "batch", "batch_size": self.batch_size, "batches": self.batches,
                     "dequeued": self.examples}]
        return self._session.stats() if self._session is not None else []

    @property
    def skip_stats(self):
        """The damaged TFRecord regions skipped under
        ``reader_options={"skip_corrupt": ...}``, in the run so far (or
        the last run): ``{"skipped": n, "skipped_bytes": n, "files":
        [{"file", "skipped", "skipped_bytes"}, ...]}``; ``None`` before
        any run."""
        if self._session is not None:
            return self._session.skip_stats()
        if self._native is not None:
            return self._native.skip_stats()
        return self._last_skip_stats

    @property
    def queue_fullness(self):
        """TensorFlow's queue summaries: ``{tag: fraction}`` (graph
        pipelines; the engine has no queues: empty)."""
        return self._session.queue_summaries() if self._session is not None else {}

    @property
    def output_shapes(self):
        """The static per-batch shapes (``None`` where unknown)."""
        self.graph  # noqa: B018 - built when first needed
        shapes = [t.shape._dims for t in self._outputs]
        return dict(zip(self._keys, shapes)) if self._keys is not None else tuple(shapes)

    def as_numpy_iterator(self):
        """Iterates the batches (same as ``iter(pipeline)``)."""
        return iter(self)


_STATE_VERSION = 1


def jax_iterator(pipeline):
    """Batches of numpy arrays with fixed shapes, ready for
    ``jax.device_put``: the pipeline must drop the remainder, so every
    batch has the same shape and a jitted step compiles once."""
    if not pipeline._drop_remainder:
        raise ValueError("a JAX iterator needs fixed batch shapes: build the Pipeline with drop_remainder=True")
    return iter(pipeline)


def _sum_shard_stats(per_producer):
    total = {"dropped": 0, "padded": 0}
    for s in per_producer:
        for k in total:
            total[k] += s[k]
    return total


def _budget(skip_corrupt):
    """``reader_options["skip_corrupt"]`` as the native Dataset takes it:
    ``(max_per_file, max_per_run, max_fraction)``, or None to fail at
    the first damaged record."""
    if skip_corrupt is None:
        return None
    unknown = set(skip_corrupt) - {"max_per_file", "max_per_run", "max_fraction"}
    if unknown:
        raise ValueError(f"skip_corrupt has unknown keys {sorted(unknown)}: max_per_file, max_per_run, max_fraction")
    per_file, per_run, fraction = (skip_corrupt.get(k) for k in ("max_per_file", "max_per_run", "max_fraction"))
    return (None if per_file is None else int(per_file), None if per_run is None else int(per_run),
            None if fraction is None else float(fraction))


def _count(name, value, minimum, none=False):
    """``value`` as an int of at least ``minimum`` (``None`` kept when
    ``none``): a TypeError naming the argument for anything that is not
    an integer (a float, a string, a bool: ``True`` is no count), a
    ValueError for one below ``minimum``."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        kind = "an integer or None" if none else "an integer"
        raise TypeError(f"{name} must be {kind}, got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def _expand(files):
    if isinstance(files, (str, os.PathLike)):
        files = [os.fspath(files)]
    out = []
    for f in files:
        f = os.fspath(f)
        if any(c in f for c in "*?["):
            # The library's glob: local patterns, and bucket listings for
            # URLs (sorted; no match is NotFoundError naming the pattern).
            out.extend(_native.glob(f))
        else:
            out.append(f)
    if not out:
        raise ValueError("no files given")
    return out


def _structure(x):
    if isinstance(x, dict):
        keys = list(x.keys())
        return keys, [x[k] for k in keys]
    if isinstance(x, (list, tuple)):
        return None, list(x)
    return None, [x]


def _batch_len(v):
    if hasattr(v, "dense_shape"):
        return int(v.dense_shape[0])
    return int(np.shape(v)[0])


def _apply_per_example(fn, batch, n):
    if isinstance(batch, dict):
        rows = [fn({k: _row(v, i) for k, v in batch.items()}) for i in range(n)]
    else:
        rows = [fn(tuple(_row(v, i) for v in batch)) for i in range(n)]
    first = rows[0] if rows else None
    if isinstance(first, dict):
        return {k: np.stack([r[k] for r in rows]) for k in first}
    if isinstance(first, (tuple, list)):
        return tuple(np.stack([r[j] for r in rows]) for j in range(len(first)))
    return np.stack(rows)


def _row(v, i):
    if hasattr(v, "dense_shape"):
        return v.values[v.indices[:, 0] == i]
    return v[i]
