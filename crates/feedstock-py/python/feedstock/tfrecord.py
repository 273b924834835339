"""TFRecord files: write them, read them back, with TensorFlow's names.

``TFRecordWriter`` frames each record exactly as TensorFlow does (length,
masked CRC32C of the length, data, masked CRC32C of the data), optionally
inside a gzip or zlib stream; ``tf_record_iterator`` yields the records of
a file and raises ``DataLossError`` (naming the file and offset) on a
corrupt or truncated one, after the good records before the damage.
"""

from __future__ import annotations

import os

from . import _native

__all__ = [
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "tf_record_iterator",
]


class TFRecordCompressionType:
    """``tf.python_io.TFRecordCompressionType``: the compression kinds."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {
    None: "",
    "": "",
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
    "NONE": "",
    "ZLIB": "ZLIB",
    "GZIP": "GZIP",
}


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: how a TFRecord file is compressed.

    ``compression_type`` is ``""``/``None``, ``"ZLIB"``, ``"GZIP"`` or a
    :class:`TFRecordCompressionType` value; ``compression_level`` is the
    deflate level (0..9, default zlib's 6). TensorFlow's buffer, window and
    strategy settings are accepted and ignored: they change speed and
    memory, never the records.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type=None,
        flush_mode=None,
        input_buffer_size=None,
        output_buffer_size=None,
        window_bits=None,
        compression_level=None,
        compression_method=None,
        mem_level=None,
        compression_strategy=None,
    ):
        if compression_type not in _TYPE_NAMES:
            raise ValueError(f"Unsupported compression type: {compression_type!r}")
        if compression_level is not None and not 0 <= compression_level <= 9:
            raise ValueError(f"compression_level must be in 0..9, got {compression_level}")
        self.compression_type = compression_type
        self.compression_level = compression_level
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for ``options`` (an options
        object, a type name, a type value or ``None``)."""
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return _TYPE_NAMES[options.compression_type]
        if options in _TYPE_NAMES:
            return _TYPE_NAMES[options]
        raise ValueError(f"Unsupported compression type: {options!r}")


def _options(options):
    level = options.compression_level if isinstance(options, TFRecordOptions) else None
    return TFRecordOptions.get_compression_type_string(options), level


class TFRecordWriter:
    """``tf.io.TFRecordWriter``: writes records to a TFRecord file.

    ``options`` is a :class:`TFRecordOptions`, a compression name
    (``"GZIP"``, ``"ZLIB"``, ``""``) or ``None``. Use it as a context
    manager, or call :meth:`close`: a compressed file is only complete once
    closed.
    """

    def __init__(self, path, options=None):
        compression, level = _options(options)
        self._w = _native.RecordWriter(os.fsdecode(path), compression, level)

    def write(self, record):
        """Writes one record (``bytes`` or ``bytearray``; ``str`` is
        written as UTF-8)."""
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif isinstance(record, bytearray):
            record = bytes(record)
        self._w.write(record)

    def flush(self):
        """Flushes what was written to the file."""
        self._w.flush()

    def close(self):
        """Finishes the file. Closing twice is harmless."""
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tf_record_iterator(path, options=None):
    """Iterates over the records of the TFRecord file ``path``, as
    ``bytes``. ``options`` gives the compression as for
    :class:`TFRecordWriter`.

    Raises ``feedstock.errors.NotFoundError`` for a missing file and
    ``DataLossError`` for a corrupt or truncated one.
    """
    compression, _ = _options(options)
    return _native.RecordIterator(os.fsdecode(path), compression)
