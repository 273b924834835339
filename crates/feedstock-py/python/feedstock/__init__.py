"""feedstock: TensorFlow's classic input pipeline, native, with no TensorFlow.

Two ways in, one native engine:

- ``import feedstock.compat.v1 as tf`` runs TensorFlow 1 input code
  (``string_input_producer``, readers, ``decode_csv``,
  ``parse_single_example``, ``shuffle_batch``, ``Session.run``, ...)
  unchanged, on feedstock's native threads.
- ``feedstock.Pipeline`` is the Pythonic way: build a pipeline, iterate
  ``for batch in pipeline:`` and get dicts of numpy arrays.

Also here: ``feedstock.errors`` (TensorFlow's exception classes),
``feedstock.example`` (``tf.train.Example`` and friends) and
``feedstock.tfrecord`` (``TFRecordWriter``, ``tf_record_iterator``).
"""

import os as _os
import warnings as _warnings

from . import errors, example, tfrecord
from ._graph import bfloat16, complex64, complex128, float16, float32, float64, int32, int64, string, uint8
from ._native import DEBUG_BUILD as _DEBUG_BUILD
from ._native import __version__
from ._ops import FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature
from ._types import SparseTensorValue
from .pipeline import Pipeline, jax_iterator

if _DEBUG_BUILD and not _os.environ.get("FEEDSTOCK_ALLOW_DEBUG_BUILD"):
    _warnings.warn(
        "feedstock's native extension is a debug build, about ten times slower "
        "than a release build (scripts/test-python builds it so); for real use "
        "install it with `pip install ./crates/feedstock-py` or rebuild with "
        "`FEEDSTOCK_PY_RELEASE=1 scripts/test-python`. Set "
        "FEEDSTOCK_ALLOW_DEBUG_BUILD=1 to silence this.",
        RuntimeWarning,
        stacklevel=2,
    )

__all__ = [
    "__version__",
    "errors",
    "example",
    "tfrecord",
    "SparseTensorValue",
    "Pipeline",
    "jax_iterator",
    "FixedLenFeature",
    "VarLenFeature",
    "SparseFeature",
    "FixedLenSequenceFeature",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int32",
    "int64",
    "string",
    "uint8",
]
