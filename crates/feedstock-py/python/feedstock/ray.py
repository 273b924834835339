"""TFRecord files as a Ray Data dataset, read by feedstock's native reader.

::

    import feedstock as fs
    import feedstock.ray

    spec = {"image": fs.FixedLenFeature([16], fs.float32),
            "label": fs.FixedLenFeature([], fs.int64),
            "tags": fs.VarLenFeature(fs.int64)}
    ds = feedstock.ray.read_tfrecords("data/train-*.tfrecord", features=spec)
    ds.count()                            # from the record index: no read
    for batch in ds.iter_batches(batch_size=128, batch_format="numpy"):
        batch["image"]                    # (n, 16) float32

:func:`read_tfrecords` is a :class:`ray.data.Datasource` (Ray's public
``Datasource`` / ``ReadTask`` API): the driver indexes every file
(through the index sidecar ``feedstock index`` writes, or one scan of the
file that checks every record; files indexed in parallel), so row counts,
``count()``
and Ray's splits need no read; each read task then runs the native
TFRecord reader over a range of consecutive records, checking both CRCs
of every record, and parses the range with the feature spec into
columnar blocks. No TensorFlow is imported, anywhere.

Columns (the schema comes from the spec, before any record is read):

- ``FixedLenFeature(shape, dtype)``: a column of ``dtype`` with one row
  per record, each row of ``shape``: ``[]`` is a plain column, ``[16]``
  float32 reads back as a ``(n, 16)`` float32 array (Ray's tensor
  extension type). A string feature is a binary column (``bytes``); one
  of shape ``[k]`` (or more dimensions) is a list of its ``bytes`` per row,
row-major. A record whose
  feature has the wrong number of values is an error naming the record
  (``FILE:OFFSET``), as the native Pipeline's.
- ``VarLenFeature(dtype)``: one row per record holding that record's
  values, however many (none included): for int64 and float32 a 1-D
  array of the dtype per row (Ray's variable-shaped tensor column; in a
  numpy batch an object array of 1-D arrays), for strings a list of
  ``bytes`` per row. This is the dense, ragged form of the
  ``SparseTensorValue`` the Pipeline gives (its row ``i`` is the values
  whose index starts with ``i``).
- ``SparseFeature`` and ``FixedLenSequenceFeature`` are refused
  (ValueError): their batched shape depends on which records share a
  block.

Read tasks: files are cut into runs of at most ``ceil(rows / parallelism)``
records (``parallelism`` is what Ray asks for, or ``override_num_blocks``),
so that a file much larger than the others is read by several tasks; runs
of small files are grouped into one task up to that size. Only local
uncompressed files are cut (a task enters the file at its first record's
offset); a compressed file or one behind a URL is one task, since it can
only be read from its start. Each task yields blocks of at most
``block_rows`` records.

Damaged records fail the read (DataLossError naming the file and offset);
there is no skipping policy here yet.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _native
from . import _graph as g
from . import _ops as ops
from . import _types
from .pipeline import _budget, _expand

__all__ = ["read_tfrecords", "skip_stats", "TFRecordDatasource"]

#: Records parsed per block a read task yields.
DEFAULT_BLOCK_ROWS = 8192


def read_tfrecords(paths, *, features, compression=None, override_num_blocks=None, block_rows=DEFAULT_BLOCK_ROWS,
                   keys=False, index_threads=None, ray_remote_args=None, skip_corrupt=None):
    """A ``ray.data.Dataset`` of the ``tf.train.Example`` records of
    ``paths`` (a path, URL or glob pattern, or a list of them), parsed
    with ``features`` (a dict of ``FixedLenFeature`` / ``VarLenFeature``).
    ``compression`` is ``None`` (from each file's extension), ``""``,
    ``"GZIP"`` or ``"ZLIB"``. Local paths are made absolute
    (the read tasks run in other processes). ``keys=True`` adds a
    ``"__key__"`` column of record keys ``FILE:OFFSET`` (``bytes``, as the Pipeline's
    ``keys=True`` gives them). ``index_threads`` files are indexed at
    once by the driver (default: the CPU count). ``skip_corrupt``, a
    budget as ``Pipeline``'s (``{"max_per_file": n, "max_per_run": n,
    "max_fraction": f}``, each optional), indexes a damaged file around
    its damaged regions within the budget, as the driver indexes it: the
    dataset holds its intact records, and ``skip_stats(ds)`` gives the
    regions skipped (without it, a damaged file fails here, naming the
    file and the offset). The other arguments go to
    :func:`ray.data.read_datasource`."""
    import ray.data

    source = TFRecordDatasource(paths, features=features, compression=compression, block_rows=block_rows,
                                keys=keys, index_threads=index_threads, skip_corrupt=skip_corrupt)
    kwargs = {}
    if override_num_blocks is not None:
        kwargs["override_num_blocks"] = override_num_blocks
    if ray_remote_args is not None:
        kwargs["ray_remote_args"] = ray_remote_args
    ds = ray.data.read_datasource(source, **kwargs)
    _SKIPS[id(ds)] = (ds, source.skip_stats())
    return ds


# The skip counts of the datasets read_tfrecords made, by the dataset's id
# (with the dataset, so that the id is not reused while the entry lives).
_SKIPS = {}


def skip_stats(ds):
    """The damaged regions skipped when the files of ``ds`` (a dataset
    :func:`read_tfrecords` made) were indexed: ``{"skipped": n,
    "skipped_bytes": n, "files": [{"file", "skipped", "skipped_bytes"},
    ...]}``."""
    entry = _SKIPS.get(id(ds))
    if entry is None or entry[0] is not ds:
        raise ValueError("skip_stats takes a dataset read_tfrecords made")
    return entry[1]


def _check_features(features):
    if not isinstance(features, dict) or not features:
        raise ValueError("features must be a non-empty dict of feature specs")
    for name, f in features.items():
        if not isinstance(f, (ops.FixedLenFeature, ops.VarLenFeature)):
            raise ValueError(
                f"feature {name!r} is a {type(f).__name__}: feedstock.ray reads FixedLenFeature and "
                "VarLenFeature (a SparseFeature's or FixedLenSequenceFeature's batched shape depends on "
                "which records share a block)")
        if name == "__key__":
            raise ValueError('"__key__" is the column keys=True adds, not a feature name')


def _table(pairs, features, keys):
    """An Arrow block of the native ``(name, value)`` pairs of one parsed
    block, in the representation the module's doc describes (each column
    built with its type from the spec, never inferred from the values:
    a VarLen column whose rows happen to have equal lengths is still
    variable-shaped)."""
    import pyarrow as pa
    from ray.data.extensions import ArrowTensorArray, ArrowVariableShapedTensorArray

    names, arrays = [], []
    for name, value in pairs:
        f = features[name]
        if isinstance(f, ops.VarLenFeature):
            rows = _ragged(value)
            if value.values.dtype == object:
                arr = pa.array([list(r) for r in rows], type=pa.list_(pa.binary()))
            else:
                arr = ArrowVariableShapedTensorArray.from_numpy(rows)
        elif value.dtype == object:
            if value.ndim > 1:
                arr = pa.array([list(r.reshape(-1)) for r in value], type=pa.list_(pa.binary()))
            else:
                arr = pa.array(list(value), type=pa.binary())
        elif value.ndim > 1:
            arr = ArrowTensorArray.from_numpy(value)
        else:
            arr = pa.array(value)
        names.append(name)
        arrays.append(arr)
    if keys is not None:
        names.append("__key__")
        arrays.append(pa.array(list(keys), type=pa.binary()))
    return pa.Table.from_arrays(arrays, names=names)


def _ragged(sparse):
    """Row ``i`` of a VarLen ``SparseTensorValue``: the values whose index
    starts with ``i`` (the parser emits them in row order), as an object
    array of 1-D arrays."""
    n = int(sparse.dense_shape[0])
    values = np.asarray(sparse.values)
    rows = np.asarray(sparse.indices)[:, 0] if len(values) else np.zeros(0, np.int64)
    bounds = np.searchsorted(rows, np.arange(1, n + 1))
    col = np.empty(n, dtype=object)
    start = 0
    for i, end in enumerate(bounds):
        col[i] = values[start:end]
        start = end
    return col


def _read_run(pieces, spec, features, compression, block_rows, keys, skip=False):
    """A read task: ``pieces`` is a list of ``(path, start, offset,
    count)``; yields Arrow blocks."""
    for path, start, offset, count in pieces:
        r = _native.TfRecordRange(path, spec, start, offset, count, compression, keys=keys, skip_corrupt=skip)
        while True:
            got = r.next_block(block_rows)
            if got is None:
                break
            pairs, block_keys = got
            yield _table(pairs, features, block_keys)


def _plan(files, counts, offsets, cuttable, rows_per_task):
    """Read tasks as lists of ``(file number, start, count)``: every file
    cut (where ``cuttable``) into runs of at most ``rows_per_task``
    records, consecutive runs grouped up to that size."""
    tasks, current, size = [], [], 0
    for i, n in enumerate(counts):
        step = rows_per_task if cuttable[i] else max(n, 1)
        start = 0
        while start < n:
            take = min(step, n - start)
            if current and size + take > rows_per_task:
                tasks.append(current)
                current, size = [], 0
            current.append((i, start, take))
            size += take
            start += take
    if current:
        tasks.append(current)
    return tasks


def TFRecordDatasource(paths, *, features, compression=None, block_rows=DEFAULT_BLOCK_ROWS, keys=False,  # noqa: N802
                       index_threads=None, skip_corrupt=None):
    """The ``ray.data.Datasource`` :func:`read_tfrecords` reads (for
    ``ray.data.read_datasource``): indexes the files now."""
    return _make_class()(paths, features=features, compression=compression, block_rows=block_rows, keys=keys,
                         index_threads=index_threads, skip_corrupt=skip_corrupt)


_CLASS = None


def _make_class():
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    class _TFRecordDatasource(Datasource):
        def __init__(self, paths, *, features, compression, block_rows, keys, index_threads, skip_corrupt):
            super().__init__()
            _check_features(features)
            if block_rows < 1:
                raise ValueError(f"block_rows must be at least 1, got {block_rows}")
            # Read tasks run elsewhere (another working directory, another host).
            self._files = [f if "://" in f else os.path.abspath(f) for f in _expand(paths)]
            self._features = dict(features)
            self._spec = ops._spec(self._features)
            self._compression = compression
            self._block_rows = int(block_rows)
            self._keys = bool(keys)
            threads = index_threads or os.cpu_count() or 1
            budget = _budget(skip_corrupt)
            self._skip = budget is not None
            with ThreadPoolExecutor(max_workers=min(threads, len(self._files))) as pool:
                got = list(pool.map(lambda f: _native.tfrecord_offsets(f, compression, budget), self._files))
            if self._skip:
                self._offsets = [o for o, _, _ in got]
                files = [{"file": f, "skipped": int(n), "skipped_bytes": int(b)}
                         for f, (_, n, b) in zip(self._files, got) if n]
                self._skips = {"skipped": sum(f["skipped"] for f in files),
                               "skipped_bytes": sum(f["skipped_bytes"] for f in files), "files": files}
            else:
                self._offsets = got
                self._skips = {"skipped": 0, "skipped_bytes": 0, "files": []}
            self._counts = [len(o) - 1 for o in self._offsets]
            self._cuttable = [
                "://" not in f and _compressed(f, compression) is False for f in self._files
            ]
            self._schema = _schema(self._features, self._keys)

        def get_name(self):
            return "FeedstockTFRecord"

        def skip_stats(self):
            """The damaged regions skipped when the files were indexed."""
            return self._skips

        def estimate_inmemory_data_size(self):
            return int(sum(int(o[-1]) for o in self._offsets))

        def num_rows(self):
            """Records in every file together (from the index)."""
            return int(sum(self._counts))

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            total = sum(self._counts)
            if total == 0:
                return []
            rows_per_task = max(1, -(-total // max(1, parallelism)))
            spec, features, compression = self._spec, self._features, self._compression
            block_rows, keys, skip = self._block_rows, self._keys, self._skip
            tasks = []
            for run in _plan(self._files, self._counts, self._offsets, self._cuttable, rows_per_task):
                pieces = [(self._files[i], start, int(self._offsets[i][start]), n) for i, start, n in run]
                rows = sum(p[3] for p in pieces)
                size = sum(int(self._offsets[i][start + n] - self._offsets[i][start]) for i, start, n in run)
                meta = BlockMetadata(num_rows=rows, size_bytes=size, exec_stats=None,
                                     input_files=[p[0] for p in pieces])
                tasks.append(ReadTask(
                    lambda pieces=pieces: _read_run(pieces, spec, features, compression, block_rows, keys, skip),
                    meta, schema=self._schema, per_task_row_limit=per_task_row_limit,
                ))
            return tasks

    _TFRecordDatasource.__name__ = _TFRecordDatasource.__qualname__ = "TFRecordDatasource"
    _CLASS = _TFRecordDatasource
    return _CLASS


def _compressed(path, compression):
    if compression is not None:
        return compression != ""
    return path.endswith((".gz", ".gzip", ".zlib", ".zz"))


def _schema(features, keys):
    """The Arrow schema of the blocks, from the spec: that of a block of
    one example of zeros built as the read tasks build theirs (no record
    is read)."""
    pairs = []
    for name, f in features.items():
        dtype = g.as_dtype(f.dtype)
        np_dtype = np.dtype(object) if dtype.name == "string" else np.dtype(dtype.name)
        if isinstance(f, ops.VarLenFeature):
            value = _types.SparseTensorValue(np.zeros((0, 2), np.int64), np.zeros(0, np_dtype),
                                             np.array([1, 0], np.int64))
        else:
            shape = [int(d) for d in ops._spec_shape(name, f, sequence=False)]
            value = np.zeros([1, *shape], np_dtype) if np_dtype != object else np.full([1, *shape], b"", object)
        pairs.append((name, value))
    return _table(pairs, features, [b""] if keys else None).schema
