"""Shared helpers for the differential harness: value encoding.

A tensor is encoded as {"dtype", "shape", "v"}: integers as JSON numbers,
floats as their IEEE bit pattern (an integer, so comparison is bitwise),
strings and bools as hex / numbers. The Rust runner writes the same form.
"""
import json
import os
import struct

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

DT_NAMES = {
    "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16",
    "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64", "bool": "bool",
    "string": "string", "object": "string", "bfloat16": "bf16",
}


def enc_array(a):
    """Encodes a numpy array (or tf tensor .numpy()) canonically."""
    a = np.asarray(a)
    kind = a.dtype.name
    if a.dtype == object or a.dtype.kind == "S":
        v = [bytes(x).hex() for x in a.reshape(-1)]
        dt = "string"
    elif a.dtype == np.float32:
        v = [int(x) for x in a.reshape(-1).view(np.uint32)]
        dt = "f32"
    elif a.dtype == np.float64:
        v = [int(x) for x in a.reshape(-1).view(np.uint64)]
        dt = "f64"
    elif a.dtype == np.float16:
        v = [int(x) for x in a.reshape(-1).view(np.uint16)]
        dt = "f16"
    elif a.dtype == np.bool_:
        v = [int(x) for x in a.reshape(-1)]
        dt = "bool"
    else:
        v = [int(x) for x in a.reshape(-1)]
        dt = DT_NAMES.get(kind, kind)
    if kind == "bfloat16":
        dt = "bf16"
    return {"dtype": dt, "shape": list(a.shape), "v": v}


def enc_sparse(st):
    return {"sparse": True, "indices": enc_array(st.indices.numpy()),
            "values": enc_array(st.values.numpy()),
            "dense_shape": [int(x) for x in st.dense_shape.numpy()]}


def run_tf(fn):
    """Runs fn() and returns {"ok": True, "out": ...} or the error kind."""
    import tensorflow as tf
    try:
        return {"ok": True, "out": fn()}
    except tf.errors.OpError as e:
        return {"ok": False, "kind": type(e).__name__,
                "msg": e.message[:300]}
    except (ValueError, TypeError) as e:
        return {"ok": False, "kind": "Python" + type(e).__name__,
                "msg": str(e)[:300]}


def write_cases(path, cases):
    with open(path, "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
