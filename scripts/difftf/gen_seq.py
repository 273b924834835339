"""parse_single_sequence_example cases: random SequenceExamples, context
and sequence specs.

Usage: gen_seq.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import tensorflow as tf

from gen_example import (DTS, NAMES, enc_out, feature, jsonable,
                         rand_example, tf_spec, np_default, rand_vals)
from tfcommon import run_tf, write_cases


def seq_spec(rng):
    spec = []
    for name in rng.sample(NAMES, rng.randint(1, 3)):
        dt = rng.choice(list(DTS))
        if rng.random() < 0.4:
            spec.append({"name": name, "kind": "varlen", "dtype": dt})
        else:
            spec.append({"name": name, "kind": "fixedseq", "dtype": dt,
                         "shape": rng.choice([[], [], [2]]),
                         "allow_missing": rng.random() < 0.5,
                         "default": None})
    return spec


def ctx_spec(rng):
    spec = []
    for name in rng.sample(NAMES, rng.randint(0, 2)):
        dt = rng.choice(list(DTS))
        if rng.random() < 0.4:
            spec.append({"name": name, "kind": "varlen", "dtype": dt})
        else:
            shape = rng.choice([[], [2]])
            n = 2 if shape else 1
            spec.append({"name": name, "kind": "fixed", "dtype": dt,
                         "shape": shape, "default": rand_vals(rng, dt, n)
                         if rng.random() < 0.5 else None})
    return spec


def seq_tf_spec(spec):
    out = {}
    for f in spec:
        dt = DTS[f["dtype"]]
        if f["kind"] == "varlen":
            out[f["name"]] = tf.io.VarLenFeature(dt)
        else:
            out[f["name"]] = tf.io.FixedLenSequenceFeature(
                f["shape"], dt, allow_missing=f["allow_missing"])
    return out


def rand_seq_example(rng, ctx, seq):
    ex = tf.train.SequenceExample()
    ctx_bytes = rand_example(rng, ctx)
    ex.context.ParseFromString(
        tf.train.Example.FromString(ctx_bytes).features.SerializeToString())
    by_name = {f["name"]: f for f in seq}
    for name in NAMES:
        if rng.random() < 0.3:
            continue
        f = by_name.get(name)
        fl = ex.feature_lists.feature_list[name]
        for _ in range(rng.randint(0, 3)):
            dt = f["dtype"] if f and rng.random() < 0.9 else rng.choice(
                list(DTS))
            n = rng.randint(0, 3)
            if f and f.get("shape") is not None and rng.random() < 0.8:
                n = 2 if f["shape"] else 1
            fl.feature.append(feature(rng, dt, n))
    return ex.SerializeToString()


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 800
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 12)
    cases = []
    for i in range(n):
        ctx, seq = ctx_spec(rng), seq_spec(rng)
        ser = rand_seq_example(rng, ctx, seq)
        inp = {"context": jsonable(ctx), "sequence": jsonable(seq),
               "record": ser.hex()}

        def call():
            c, s = tf.io.parse_single_sequence_example(
                ser, context_features=tf_spec(ctx) or None,
                sequence_features=seq_tf_spec(seq))
            return enc_out(ctx, c) + enc_out(seq, s)
        cases.append({"id": f"seq{i}", "area": "sequence", "input": inp,
                      "tf": run_tf(call)})
    write_cases(out, cases)


if __name__ == "__main__":
    main()
