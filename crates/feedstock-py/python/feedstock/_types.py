"""Value types shared by the layers of the package."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["SparseTensorValue"]


class SparseTensorValue(NamedTuple):
    """A sparse tensor's value, as ``Session.run`` returns it.

    ``indices`` is an ``int64`` array of shape ``[nnz, rank]``, ``values``
    an array of shape ``[nnz]`` and ``dense_shape`` an ``int64`` array of
    shape ``[rank]``, as in TensorFlow's ``tf.compat.v1.SparseTensorValue``.
    """

    indices: np.ndarray
    values: np.ndarray
    dense_shape: np.ndarray

    def to_dense(self, default_value=0):
        """The dense array this value stands for, ``default_value`` elsewhere."""
        dtype = self.values.dtype
        out = np.full(tuple(int(d) for d in self.dense_shape), default_value, dtype=dtype)
        if len(self.values):
            out[tuple(self.indices.T)] = self.values
        return out
