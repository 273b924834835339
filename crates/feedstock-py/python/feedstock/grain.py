"""TFRecord files as a random-access source for Google Grain.

::

    import grain
    from feedstock.grain import TFRecordSource

    source = TFRecordSource("data/train-*.tfrecord")
    len(source)                  # records in every file, from the index
    source[17]                   # the bytes of record 17, CRCs checked
    ds = grain.MapDataset.source(source).shuffle(seed=7).map(parse)

Grain's global shuffle, sharding and checkpoints need a source it can
read by record number: this one reads existing TFRecord files through
their record index (the ``feedstock index`` sidecar, or one scan of each
file that checks every record, done when the source is made), with no
conversion to ArrayRecord. An uncompressed local file is read by
position (one positioned read per record, through the page cache); a
gzip or zlib file is inflated from its start for each record, which is
correct but slow: decompress such files first. The source pickles as
its file list and reopens the indexes in the process that unpickles it
(Grain's worker processes). It imports no Grain itself.
"""

from __future__ import annotations

import bisect

from . import _native
from .pipeline import _expand

__all__ = ["TFRecordSource"]


class TFRecordSource:
    """Record ``i`` of TFRecord files taken in order (a glob pattern, a
    path or URL, or a list), as bytes; ``len()`` of them all."""

    def __init__(self, paths, compression=None):
        self._paths = list(_expand(paths))
        self._compression = compression
        self._open()

    def _open(self):
        self._files = [_native.TfRecordIndex(p, self._compression) for p in self._paths]
        self._ends = []
        total = 0
        for f in self._files:
            total += len(f)
            self._ends.append(total)

    def __len__(self):
        return self._ends[-1] if self._ends else 0

    def __getitem__(self, record_key):
        i = int(record_key)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"record {record_key} of {len(self)}")
        f = bisect.bisect_right(self._ends, i)
        start = self._ends[f - 1] if f else 0
        return self._files[f].read(i - start)

    def __getstate__(self):
        return {"paths": self._paths, "compression": self._compression}

    def __setstate__(self, state):
        self._paths = state["paths"]
        self._compression = state["compression"]
        self._open()

    def __repr__(self):
        return f"TFRecordSource({len(self._paths)} files, {len(self)} records)"
