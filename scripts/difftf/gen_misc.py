"""Readers (TextLine, FixedLength, TFRecord), decode_raw and
decode_compressed cases. Files are written under FILES_DIR and named in
the cases, so feedstock reads the very same bytes (and record keys, which
hold the path, compare directly).

Usage: gen_misc.py OUT.jsonl FILES_DIR [N] [SEED]
"""
import gzip
import os
import random
import sys
import zlib

import numpy as np
import tensorflow as tf

from tfcommon import enc_array, run_tf, write_cases

v1 = tf.compat.v1


def tf_read_all(make_reader, path):
    g = tf.Graph()
    with g.as_default():
        q = v1.FIFOQueue(2, tf.string)
        enq = q.enqueue([path])
        close = q.close()
        k, v = make_reader().read_up_to(q, 1 << 20)
        with v1.Session(graph=g) as s:
            s.run(enq)
            s.run(close)
            keys, vals = [], []
            while True:
                try:
                    kk, vv = s.run([k, v])
                except tf.errors.OutOfRangeError:
                    break
                keys += list(kk)
                vals += list(vv)
    return [enc_array(np.array(keys, dtype=object)),
            enc_array(np.array(vals, dtype=object))]


def compress(data, comp):
    if comp == "GZIP":
        return gzip.compress(data)
    if comp == "ZLIB":
        return zlib.compress(data)
    return data


def text_case(rng, i, d):
    n = rng.randint(0, 30)
    text = "".join(rng.choice(["a", "b", "\n", "\n", "\r", "\r\n", " ",
                               ","]) for _ in range(n))
    if rng.random() < 0.1:
        text = ""
    path = os.path.join(d, f"t{i}.txt")
    with open(path, "wb") as f:
        f.write(text.encode())
    skip = rng.choice([0, 0, 1, 2, 5])
    return {"id": f"text{i}", "area": "text_line",
            "input": {"path": path, "skip": skip},
            "tf": run_tf(lambda: tf_read_all(
                lambda: v1.TextLineReader(skip_header_lines=skip), path))}


def fixed_case(rng, i, d):
    rec = rng.randint(1, 5)
    header = rng.choice([0, 0, 1, 3])
    footer = rng.choice([0, 0, 1, 2])
    hop = rng.choice([0, 0, rng.randint(1, rec)])
    step = hop or rec
    count = rng.randint(0, 5)
    body = rec + (count - 1) * step if count else 0
    length = header + body + footer
    valid = True
    if rng.random() < 0.2:
        length += rng.randint(1, 3)  # an invalid layout (TF drops bytes)
        valid = False
    data = bytes(rng.randrange(256) for _ in range(length))
    comp = rng.choice(["", "", "GZIP", "ZLIB"])
    path = os.path.join(d, f"f{i}.bin")
    with open(path, "wb") as f:
        f.write(compress(data, comp))
    inp = {"path": path, "record": rec, "header": header,
           "footer": footer, "hop": hop, "compression": comp,
           "valid_layout": valid}
    return {"id": f"fixed{i}", "area": "fixed_length", "input": inp,
            "tf": run_tf(lambda: tf_read_all(
                lambda: v1.FixedLengthRecordReader(
                    rec, header_bytes=header, footer_bytes=footer,
                    hop_bytes=hop, encoding=comp or None), path))}


def tfrecord_case(rng, i, d):
    comp = rng.choice(["", "GZIP", "ZLIB"])
    path = os.path.join(d, f"r{i}.tfrecord")
    with tf.io.TFRecordWriter(path, comp) as w:
        for _ in range(rng.randint(0, 5)):
            w.write(bytes(rng.randrange(256)
                          for _ in range(rng.randint(0, 40))))
    opts = v1.python_io.TFRecordOptions(
        {"": v1.python_io.TFRecordCompressionType.NONE,
         "GZIP": v1.python_io.TFRecordCompressionType.GZIP,
         "ZLIB": v1.python_io.TFRecordCompressionType.ZLIB}[comp])
    return {"id": f"rec{i}", "area": "tfrecord",
            "input": {"path": path, "compression": comp},
            "tf": run_tf(lambda: tf_read_all(
                lambda: v1.TFRecordReader(options=opts), path))}


RAW = {"int8": tf.int8, "uint8": tf.uint8, "int16": tf.int16,
       "uint16": tf.uint16, "int32": tf.int32, "uint32": tf.uint32,
       "int64": tf.int64, "uint64": tf.uint64, "float32": tf.float32,
       "float64": tf.float64, "bool": tf.bool}


def raw_case(rng, i):
    name = rng.choice(list(RAW))
    size = RAW[name].size
    n = rng.randint(0, 4) * size + (rng.randint(1, 3) if rng.random() < 0.1
                                    else 0)
    data = bytes(rng.choice([0, 1, 2, 0x7f, 0x80, 0xff, rng.randrange(256)])
                 for _ in range(n))
    little = rng.random() < 0.5
    return {"id": f"raw{i}", "area": "decode_raw",
            "input": {"bytes": data.hex(), "dtype": name, "little": little},
            "tf": run_tf(lambda: [enc_array(tf.io.decode_raw(
                [data], RAW[name], little_endian=little).numpy()[0])])}


def compressed_case(rng, i):
    data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 50)))
    comp = rng.choice(["", "GZIP", "ZLIB"])
    z = compress(data, comp)
    what = rng.random()
    if what < 0.15 and comp:
        z = z[:rng.randint(0, len(z) - 1)]
    elif what < 0.25 and comp == "GZIP":
        z += gzip.compress(b"second member")
    elif what < 0.35 and comp:
        z += bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    elif what < 0.4:
        z = bytes(rng.randrange(256) for _ in range(rng.randint(0, 20)))
    return {"id": f"dc{i}", "area": "decode_compressed",
            "input": {"bytes": z.hex(), "compression": comp},
            "tf": run_tf(lambda: [enc_array(np.array(
                [tf.io.decode_compressed(z, comp).numpy()], dtype=object))])}


def main():
    out, d = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 5)
    os.makedirs(d, exist_ok=True)
    cases = []
    for i in range(n):
        cases.append(text_case(rng, i, d))
        cases.append(fixed_case(rng, i, d))
        cases.append(tfrecord_case(rng, i, d))
    for i in range(n * 5):
        cases.append(raw_case(rng, i))
        cases.append(compressed_case(rng, i))
    write_cases(out, cases)


if __name__ == "__main__":
    main()
