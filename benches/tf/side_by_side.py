#!/usr/bin/env python3
"""Side-by-side throughput and peak memory of TensorFlow and feedstock on
every workload of the performance table.

Documentation of the README's performance table, not a CI test. It
builds feedstock's measuring programs (release), generates the data sets
deterministically (`side_by_side gen`), then runs TensorFlow's and
feedstock's version of each workload alternately, in one session, each in
its own process, and prints the median of each form, the ratio against
TensorFlow's faster form, and each process's peak RSS.

    python3 benches/tf/side_by_side.py --tf-python /work/venv-tf/bin/python
        [--rounds 3] [--raw-mb 1024] [--seed-epochs 5] [--only raw,cifar,...]

Without --tf-python (or when it cannot import tensorflow) only
feedstock's figures are printed. parse_example rows run on one core
(`taskset -c 0`) on both sides.

Workloads (TensorFlow's form first, then feedstock's):
  raw      TFRecordDataset.batch(1024)  |  Reader::read, read_up_to(1024),
           read_batch(1024); reading the file (page cache) alongside
  cifar    FixedLengthRecordDataset, decode as cifar10_input.py does
           (map then batch, batch then map)  |  examples/cifar_throughput.rs
  csv      TextLineDataset.batch(1024).map(decode_csv) on 2 threads  |
           per line, read_batch + decode_batch on 1 and 2 threads
  parse    tf.io.parse_example over in-memory batches of 1024  |
           parse_example over the same; a plain copy of the bytes alongside
  seed     the seed's TF1 queue pipeline (string_input_producer ->
           TFRecordReader -> parse_single_example -> normalize ->
           shuffle_batch 128, 2 threads, min_after_dequeue 10000)  |
           the same per record, and batched (read_batch -> parse_example
           -> enqueue_many); over --seed-epochs epochs of the 60 000
           examples on both sides, so that a run is not mostly the
           filling of the 10 000-row queue. Alongside, feedstock's
           `seed_parts`: the pipeline's work part by part on one thread
           each, and the best two cores could do with it.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CIFAR_RECORD = 3073
CIFAR_RECORDS = 50_000
MNIST_FILES = 4

TF_COMMON = r"""
import os, sys, time
import tensorflow as tf
def report(form, n, start):
    secs = time.perf_counter() - start
    print(form, n, f"{secs:.4f}", f"{n / secs:.0f}", flush=True)
d, what = sys.argv[1], sys.argv[2]
"""

TF_PROGRAMS = {
    "raw": r"""
ds = tf.data.TFRecordDataset(os.path.join(d, "raw.tfrecord")).batch(1024)
n, start = 0, time.perf_counter()
for b in ds:
    n += int(b.shape[0])
report("batched", n, start)
""",
    "cifar": r"""
path = os.path.join(d, "cifar.bin")
def decode(r, form):
    raw = tf.io.decode_raw(r, tf.uint8)
    if form == "per_record":
        label = tf.cast(raw[0:1], tf.int32)
        image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
    else:
        label = tf.cast(raw[:, 0], tf.int32)
        image = tf.transpose(tf.reshape(raw[:, 1:], [-1, 3, 32, 32]), [0, 2, 3, 1])
    return label, image
for form in ("per_record", "batched"):
    ds = tf.data.FixedLengthRecordDataset([path] * 2, 3073)
    f = lambda r: decode(r, form)
    ds = ds.map(f).batch(1024) if form == "per_record" else ds.batch(1024).map(f)
    for _ in ds.take(2):
        pass
    n, start = 0, time.perf_counter()
    for label, image in ds:
        n += int(label.shape[0])
    report(form, n, start)
""",
    "csv": r"""
if what == "numeric":
    defaults = [tf.constant(0, tf.int64), tf.constant(0, tf.int32),
                tf.constant(0.0, tf.float32), tf.constant(0.0, tf.float64),
                tf.constant(0, tf.int32)]
else:
    defaults = [tf.constant(""), tf.constant(""), tf.constant(0, tf.int32),
                tf.constant(""), tf.constant(0.0, tf.float32)]
files = [os.path.join(d, f"{what}-{p}.csv") for p in range(2)]
ds = (tf.data.TextLineDataset(files).batch(1024)
      .map(lambda l: tf.io.decode_csv(l, defaults),
           num_parallel_calls=tf.data.AUTOTUNE).prefetch(2))
n, start = 0, time.perf_counter()
for cols in ds:
    n += int(cols[0].shape[0])
report("batched", n, start)
""",
    "parse": r"""
if what == "mnist":
    files = [os.path.join(d, f"mnist-{f}.tfrecord") for f in range(4)]
    spec = {"image_raw": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}
else:
    files = [os.path.join(d, "dense.tfrecord")]
    spec = {"image": tf.io.FixedLenFeature([784], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64)}
recs = [r.numpy() for r in tf.data.TFRecordDataset(files)]
batches = [tf.constant(recs[i:i + 1024]) for i in range(0, len(recs), 1024)]
tf.io.parse_example(batches[0], spec)
n, start = 0, time.perf_counter()
for _ in range(int(sys.argv[3])):
    for b in batches:
        tf.io.parse_example(b, spec)
        n += int(b.shape[0])
report("batch_1024", n, start)
""",
    "seed": r"""
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
files = [os.path.join(d, f"mnist-{f}.tfrecord") for f in range(4)]
start = time.perf_counter()
q = tf.train.string_input_producer(files, num_epochs=int(sys.argv[3]),
                                   shuffle=True)
reader = tf.TFRecordReader()
_, serialized = reader.read(q)
features = tf.parse_single_example(serialized, features={
    "image_raw": tf.FixedLenFeature([], tf.string),
    "label": tf.FixedLenFeature([], tf.int64)})
image = tf.decode_raw(features["image_raw"], tf.uint8)
image.set_shape([784])
image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5
label = tf.cast(features["label"], tf.int32)
images, labels = tf.train.shuffle_batch(
    [image, label], batch_size=128, num_threads=2,
    capacity=10000 + 3 * 128, min_after_dequeue=10000,
    allow_smaller_final_batch=True)
sess = tf.Session()
sess.run(tf.group(tf.global_variables_initializer(),
                  tf.local_variables_initializer()))
coord = tf.train.Coordinator()
threads = tf.train.start_queue_runners(sess=sess, coord=coord)
n = 0
try:
    while True:
        n += sess.run(labels).shape[0]
except tf.errors.OutOfRangeError:
    pass
coord.request_stop()
coord.join(threads)
report("queues", n, start)
""",
}


def run(cmd, env=None, pin=False):
    """Runs `cmd`; returns its `form -> rate` lines and its peak RSS (MB)."""
    if pin and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                             text=True, env={**os.environ, **(env or {})})
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            sys.stderr.write(err.read())
            raise SystemExit(f"{cmd[:4]} failed with {code}")
    rates = {}
    for line in out.strip().splitlines():
        form, _, _, rate = line.split()
        rates[form] = float(rate)
    return rates, usage.ru_maxrss / 1024


def generate_cifar(path):
    """Deterministic CIFAR-like records: label byte, then 3072 pixels."""
    rng = random.Random(20260101)
    with open(path, "wb") as f:
        for i in range(CIFAR_RECORDS):
            f.write(bytes([i % 10]))
            f.write(rng.randbytes(CIFAR_RECORD - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tf-python", default=os.environ.get("TF_PYTHON"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--raw-mb", type=int, default=1024)
    ap.add_argument("--parse-passes", type=int, default=10)
    ap.add_argument("--seed-epochs", type=int, default=5)
    ap.add_argument("--only", default="raw,cifar,csv,parse,seed")
    ap.add_argument("--data", help="reuse (or keep) the data sets here")
    args = ap.parse_args()
    only = args.only.split(",")

    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "feedstock",
         "--example", "side_by_side", "--example", "cifar_throughput"],
        cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "examples")
    sbs = os.path.join(exe, "side_by_side")
    tf_ok = bool(args.tf_python) and subprocess.run(
        [args.tf_python, "-c", "import tensorflow"],
        capture_output=True).returncode == 0
    tf_env = {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}

    tmp = None
    d = args.data
    if d is None:
        tmp = tempfile.TemporaryDirectory()
        d = tmp.name
    if not os.path.exists(os.path.join(d, "raw.tfrecord")):
        subprocess.run([sbs, "gen", d, str(args.raw_mb)], check=True)
    if not os.path.exists(os.path.join(d, "cifar.bin")):
        generate_cifar(os.path.join(d, "cifar.bin"))

    # (workload, argument, pinned to one core, feedstock command)
    jobs = []
    if "raw" in only:
        jobs.append(("raw", "-", False, [sbs, "raw", d]))
    if "cifar" in only:
        jobs.append(("cifar", "-", False,
                     [os.path.join(exe, "cifar_throughput"),
                      os.path.join(d, "cifar.bin"), "2"]))
    if "csv" in only:
        for kind in ("numeric", "quoted"):
            jobs.append(("csv", kind, False, [sbs, "csv", d, kind]))
    if "parse" in only:
        for kind in ("mnist", "dense"):
            jobs.append(("parse", kind, True,
                         [sbs, "parse", d, kind, str(args.parse_passes)]))
    if "seed" in only:
        epochs = str(args.seed_epochs)
        for form in ("per_record", "batched"):
            jobs.append(("seed", form, False, [sbs, "seed", d, form, epochs]))
        jobs.append(("seed", "parts", False, [sbs, "seed_parts", d, epochs]))

    rates, rss = {}, {}

    def keep(side, work, arg, result):
        got, mb = result
        for form, r in got.items():
            rates.setdefault((side, work, arg, form), []).append(r)
            rss.setdefault((side, work, arg, form), []).append(mb)

    for _ in range(args.rounds):
        for work, arg, pin, cmd in jobs:
            if tf_ok and not (work == "seed" and arg != "per_record"):
                last = args.seed_epochs if work == "seed" else args.parse_passes
                tf_cmd = [args.tf_python, "-c", TF_COMMON + TF_PROGRAMS[work],
                          d, arg, str(last)]
                keep("tf", work, "-" if work == "seed" else arg,
                     run(tf_cmd, tf_env, pin))
            keep("fs", work, arg, run(cmd, pin=pin))

    med = {k: statistics.median(v) for k, v in rates.items()}
    peak = {k: max(v) for k, v in rss.items()}

    def tf_best(work, arg):
        vals = [v for (s, w, a, _), v in med.items()
                if s == "tf" and w == work and a == arg]
        return max(vals) if vals else None

    rows = []

    def row(name, work, arg, form, goal, met=None, tf_arg=None, vs_tf=True):
        # vs_tf=False: a figure of another unit than TensorFlow's records/s
        # (no TensorFlow column, no ratio).
        t = tf_best(work, tf_arg or arg) if vs_tf else None
        f = med.get(("fs", work, arg, form))
        if f is None:
            return
        ratio = f / t if t else None
        verdict = met(f, ratio) if met else None
        rows.append((name, t, f, ratio, goal, verdict))

    at_least = lambda x: (lambda f, r: None if r is None else r >= x)
    if "raw" in only:
        page = med[("fs", "raw", "-", "page_cache_read")] * 1024  # bytes/s
        rec = 1024 + 16  # record + framing
        for form in ("read", "read_up_to", "read_batch"):
            row(f"raw TFRecord 1 KiB, Reader::{form}", "raw", "-", form,
                "≥ 8×, ≥ 0.5× page cache",
                lambda f, r: None if r is None else
                r >= 8 and f * rec >= 0.5 * page)
        row("  (reading the file from the page cache, KiB/s)", "raw", "-",
            "page_cache_read", "", vs_tf=False)
        row("  (framing + CRCs over the bytes in memory)", "raw", "-",
            "framing_in_memory", "")
    if "cifar" in only:
        for form, name in (("per_record_ops", "per record, generic ops"),
                           ("per_record", "per record, FixedImageDecoder"),
                           ("batched", "batched, read_batch + decode_batch")):
            row(f"CIFAR {name}", "cifar", "-", form, "≥ 5×", at_least(5))
    if "csv" in only:
        for kind in ("numeric", "quoted"):
            row(f"decode_csv {kind}, per line", "csv", kind, "per_line", "")
            if kind == "numeric":
                row(f"decode_csv {kind}, batched, 1 thread", "csv", kind,
                    "batched", "≥ 4× on one core", at_least(4))
            row(f"decode_csv {kind}, batched, 2 threads", "csv", kind,
                "batched_2_threads", "≥ 8× on two", at_least(8))
    if "parse" in only:
        for kind in ("mnist", "dense"):
            row(f"parse_example {kind}, batch 1024, 1 core", "parse", kind,
                "batch_1024", "≥ 2×", at_least(2))
            row("  (copying the same bytes, batch 1024)", "parse", kind,
                "copy_batch_1024", "")
    if "seed" in only:
        row("seed pipeline, per record", "seed", "per_record", "per_record",
            "≥ 700 k/s", lambda f, r: f >= 700e3, tf_arg="-")
        row("seed pipeline, batched (read_batch 128)", "seed", "batched",
            "batched", "≥ 1 M/s", lambda f, r: f >= 1e6, tf_arg="-")
        row("  (read + parse + normalize alone, 1 thread)", "seed", "parts",
            "read_parse_normalize", "")
        row("  (the shuffle queue's two row copies alone, 1 thread)", "seed",
            "parts", "queue_copies", "")
        a = med.get(("fs", "seed", "parts", "read_parse_normalize"))
        b = med.get(("fs", "seed", "parts", "queue_copies"))
        if a and b:
            # Both parts' CPU time per example, spread over two cores.
            rows.append(("  (the best two cores could do with both parts)",
                         None, 2 / (1 / a + 1 / b), None, "", None))

    print(f"median of {args.rounds} alternating rounds; raw file "
          f"{args.raw_mb} MiB; seed pipeline {args.seed_epochs} epochs; "
          f"TensorFlow = its faster form")
    print("| workload | TensorFlow /s | feedstock /s | ratio | goal | met |")
    print("|---|---:|---:|---:|---|---|")
    k = lambda v: "-" if v is None else (
        f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k")
    for name, t, f, ratio, goal, verdict in rows:
        r = "-" if ratio is None else f"{ratio:.1f}×"
        v = "" if verdict is None else ("yes" if verdict else "**no**")
        print(f"| {name} | {k(t)} | {k(f)} | {r} | {goal} | {v} |")
    if "seed" in only:
        print()
        print("| seed pipeline peak RSS | MB | goal | met |")
        print("|---|---:|---|---|")
        for side, arg, form, name in (
                ("tf", "-", "queues", "TensorFlow, TF1 queues"),
                ("fs", "per_record", "per_record", "feedstock per record"),
                ("fs", "batched", "batched", "feedstock batched")):
            mb = peak.get((side, "seed", arg, form))
            if mb is not None:
                met = "" if side == "tf" else ("yes" if mb <= 100 else "**no**")
                goal = "" if side == "tf" else "≤ 100 MB"
                print(f"| {name} | {mb:.0f} | {goal} | {met} |")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
