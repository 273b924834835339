#!/usr/bin/env python3
"""Side-by-side throughput of TensorFlow and feedstock on CIFAR-10's
fixed-length record path (3073-byte records -> label + [32, 32, 3] image).

Documentation of the README's performance table, not a CI test. It
generates the data set deterministically, then alternates TensorFlow's
and feedstock's runs in one session (same file, same machine, page cache
warm) and prints the median of each and the ratio against TensorFlow.

    python3 benches/tf/side_by_side.py [--tf-python /work/venv-tf/bin/python]
        [--records 50000] [--rounds 3] [--passes 2]

Without --tf-python (or when it cannot import tensorflow) only
feedstock's figures are printed.

TensorFlow's forms (tf.data, its fastest input API for this format):
  per record: FixedLengthRecordDataset -> map(decode) -> batch(1024)
  batched:    FixedLengthRecordDataset -> batch(1024) -> map(decode)
decode = decode_raw, slice label (cast int32), slice image, reshape
[3, 32, 32], transpose to [32, 32, 3], as cifar10_input.py does.
feedstock's forms: see crates/feedstock/examples/cifar_throughput.rs.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORD = 3073

TF_PROGRAM = r"""
import sys, time
import tensorflow as tf
path, passes, form = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def decode(r):
    raw = tf.io.decode_raw(r, tf.uint8)
    if form == "per_record":
        label = tf.cast(raw[0:1], tf.int32)
        image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
    else:
        label = tf.cast(raw[:, 0], tf.int32)
        image = tf.transpose(tf.reshape(raw[:, 1:], [-1, 3, 32, 32]), [0, 2, 3, 1])
    return label, image
ds = tf.data.FixedLengthRecordDataset([path] * passes, 3073)
ds = ds.map(decode).batch(1024) if form == "per_record" else ds.batch(1024).map(decode)
for _ in ds.take(2):
    pass
n, start = 0, time.perf_counter()
for label, image in ds:
    n += int(label.shape[0])
secs = time.perf_counter() - start
print(form, n, f"{secs:.4f}", f"{n / secs:.0f}")
"""


def generate(path, records):
    """Deterministic CIFAR-like records: label byte, then 3072 pixels."""
    rng = random.Random(20260101)
    with open(path, "wb") as f:
        for i in range(records):
            f.write(bytes([i % 10]))
            f.write(rng.randbytes(RECORD - 1))


def parse(out):
    rates = {}
    for line in out.strip().splitlines():
        form, n, secs, rate = line.split()
        rates[form] = float(rate)
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tf-python", default=os.environ.get("TF_PYTHON"))
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()

    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "feedstock",
         "--example", "cifar_throughput"],
        cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "examples", "cifar_throughput")
    tf_ok = False
    if args.tf_python:
        tf_ok = subprocess.run(
            [args.tf_python, "-c", "import tensorflow"],
            capture_output=True).returncode == 0

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cifar.bin")
        generate(path, args.records)
        results = {}
        for _ in range(args.rounds):
            if tf_ok:
                for form in ("per_record", "batched"):
                    out = subprocess.run(
                        [args.tf_python, "-c", TF_PROGRAM, path,
                         str(args.passes), form],
                        capture_output=True, text=True, check=True,
                        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}).stdout
                    for k, v in parse(out).items():
                        results.setdefault("tf_" + k, []).append(v)
            out = subprocess.run([exe, path, str(args.passes)],
                                 capture_output=True, text=True,
                                 check=True).stdout
            for k, v in parse(out).items():
                results.setdefault("fs_" + k, []).append(v)

    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"CIFAR-10 fixed-length path, {args.records} records x "
          f"{args.passes} passes, median of {args.rounds} alternating rounds")
    print("| form | TensorFlow rec/s | feedstock rec/s | ratio |")
    print("|---|---:|---:|---:|")
    rows = [
        ("per record, generic ops (TF's five steps)", "tf_per_record",
         "fs_per_record_ops"),
        ("per record, FixedImageDecoder", "tf_per_record", "fs_per_record"),
        ("batched (read_batch + decode_batch)", "tf_batched", "fs_batched"),
    ]
    for name, t, f in rows:
        tv = med.get(t)
        fv = med[f]
        ratio = f"{fv / tv:.1f}x" if tv else "-"
        tcol = f"{tv / 1e3:.0f} k" if tv else "-"
        print(f"| {name} | {tcol} | {fv / 1e3:.0f} k | {ratio} |")


if __name__ == "__main__":
    sys.exit(main())
