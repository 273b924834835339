"""parse_single_example / parse_example cases: random Examples and specs.

Usage: gen_example.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import tensorflow as tf

from tfcommon import enc_array, enc_sparse, run_tf, write_cases

DTS = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}
NAMES = ["a", "b", "c", "d"]
SHAPES = [[], [], [1], [2], [3], [2, 2], [0], [1, 2]]


def rand_vals(rng, dt, n):
    if dt == "int64":
        return [rng.choice([0, 1, -1, 7, 2**40, -2**63, 2**63 - 1,
                            rng.randint(-100, 100)]) for _ in range(n)]
    if dt == "float32":
        return [rng.choice([0.0, -0.0, 1.5, -2.25, 1e30, float("inf"),
                            rng.randint(-100, 100) / 4]) for _ in range(n)]
    return [rng.choice([b"", b"x", b"hello", b"\x00\xff", b"a,b"])
            for _ in range(n)]


def feature(rng, dt, n):
    vals = rand_vals(rng, dt, n)
    if dt == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=vals))
    if dt == "float32":
        return tf.train.Feature(float_list=tf.train.FloatList(value=vals))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))


def rand_spec(rng):
    spec = []
    for name in rng.sample(NAMES, rng.randint(1, 4)):
        dt = rng.choice(list(DTS))
        kind = rng.choice(["fixed", "fixed", "varlen", "fixedseq"])
        f = {"name": name, "kind": kind, "dtype": dt}
        if kind == "fixed":
            f["shape"] = rng.choice(SHAPES)
            n = 1
            for d in f["shape"]:
                n *= d
            f["default"] = rand_vals(rng, dt, n) if rng.random() < 0.5 \
                else None
        elif kind == "fixedseq":
            f["shape"] = rng.choice([[], [], [2], [1, 2]])
            f["allow_missing"] = True
            f["default"] = rand_vals(rng, dt, 1)[0] if rng.random() < 0.3 \
                else None
        spec.append(f)
    if rng.random() < 0.3:
        rank = rng.randint(1, 2)
        spec.append({"name": "sp", "kind": "sparse",
                     "dtype": rng.choice(list(DTS)),
                     "index_keys": ["idx0", "idx1"][:rank],
                     "value_key": "val",
                     "size": [rng.randint(1, 5) for _ in range(rank)]})
    return spec


def rand_example(rng, spec):
    feats = {}
    by_name = {f["name"]: f for f in spec}
    sp = by_name.get("sp")
    for name in NAMES:
        if rng.random() < 0.25:
            continue
        f = by_name.get(name)
        dt = f["dtype"] if f and rng.random() < 0.85 else rng.choice(
            list(DTS))
        n = rng.randint(0, 5)
        if f and "shape" in f and rng.random() < 0.7:
            k = 1
            for d in f["shape"]:
                k *= d
            n = k * (1 if f["kind"] == "fixed" else rng.randint(0, 3))
        feats[name] = feature(rng, dt, n)
        if rng.random() < 0.03:
            feats[name] = tf.train.Feature()
    if sp:
        n = rng.randint(0, 4)
        for k in sp["index_keys"]:
            if rng.random() < 0.05:
                continue
            m = n if rng.random() < 0.9 else rng.randint(0, 4)
            dt = "int64" if rng.random() < 0.95 else "float32"
            feats[k] = feature(rng, dt, m)
            if dt == "int64":
                feats[k].int64_list.value[:] = [
                    rng.choice([0, 1, 2, 3, 4, 5, -1])
                    for _ in range(m)]
        if rng.random() < 0.95:
            dt = sp["dtype"] if rng.random() < 0.9 else "int64"
            feats["val"] = feature(rng, dt, n if rng.random() < 0.9
                                   else rng.randint(0, 4))
    ex = tf.train.Example(features=tf.train.Features(feature=feats))
    ser = ex.SerializeToString()
    if rng.random() < 0.1:
        # Concatenated messages merge: a repeated key's last entry wins.
        ser += rand_example_simple(rng, spec)
    return ser


def rand_example_simple(rng, spec):
    name = rng.choice(NAMES)
    dt = rng.choice(list(DTS))
    ex = tf.train.Example(features=tf.train.Features(
        feature={name: feature(rng, dt, rng.randint(0, 4))}))
    return ex.SerializeToString()


def np_default(dt, v):
    """Defaults as numpy arrays: TF's eager cache of Python scalar
    constants treats 0.0 and -0.0 as one key, so a -0.0 made earlier
    would be returned for a later 0.0."""
    import numpy as np
    kind = {"int64": np.int64, "float32": np.float32,
            "string": object}[dt]
    return np.array(v, dtype=kind)


def tf_spec(spec):
    out = {}
    for f in spec:
        dt = DTS[f["dtype"]]
        if f["kind"] == "fixed":
            kw = {}
            if f["default"] is not None:
                kw["default_value"] = np_default(
                    f["dtype"], f["default"] if f["shape"] else
                    f["default"][0]).reshape(f["shape"])
            out[f["name"]] = tf.io.FixedLenFeature(f["shape"], dt, **kw)
        elif f["kind"] == "varlen":
            out[f["name"]] = tf.io.VarLenFeature(dt)
        elif f["kind"] == "fixedseq":
            kw = {}
            if f["default"] is not None:
                kw["default_value"] = np_default(f["dtype"], f["default"])
            out[f["name"]] = tf.io.FixedLenSequenceFeature(
                f["shape"], dt, allow_missing=True, **kw)
        else:
            out[f["name"]] = tf.io.SparseFeature(
                f["index_keys"], f["value_key"], dt, f["size"])
    return out


def enc_out(spec, res):
    out = []
    for f in spec:
        v = res[f["name"]]
        if isinstance(v, tf.SparseTensor):
            out.append(enc_sparse(v))
        else:
            out.append(enc_array(v.numpy()))
    return out


def jsonable(spec):
    def fix(v):
        if isinstance(v, bytes):
            return {"b": v.hex()}
        if isinstance(v, float):
            import struct
            return {"f": struct.unpack("<I", struct.pack("<f", v))[0]}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return [{k: fix(v) for k, v in f.items()} for f in spec]


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 4)
    cases = []
    for i in range(n):
        spec = rand_spec(rng)
        sers = [rand_example(rng, spec) for _ in range(rng.randint(1, 3))]
        inp = {"spec": jsonable(spec), "records": [s.hex() for s in sers]}
        try:
            ts = tf_spec(spec)
        except (ValueError, TypeError) as e:
            cases.append({"id": f"ex{i}", "area": "example_single",
                          "input": inp, "tf": {
                              "ok": False, "kind": "PythonValueError",
                              "msg": str(e)[:300]}})
            continue
        cases.append({"id": f"ex{i}", "area": "example_single",
                      "input": inp, "tf": run_tf(lambda: enc_out(
                          spec, tf.io.parse_single_example(sers[0], ts)))})
        cases.append({"id": f"exb{i}", "area": "example_batch",
                      "input": inp, "tf": run_tf(lambda: enc_out(
                          spec, tf.io.parse_example(sers, ts)))})
    write_cases(out, cases)


if __name__ == "__main__":
    main()
