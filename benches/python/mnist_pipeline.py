#!/usr/bin/env python3
"""Throughput of the seed's MNIST-like input pipeline, every way, in one run.

TFRecord files of ``tf.train.Example`` (784 raw bytes + an int64 label)
→ parse → ``decode_raw`` → cast and scale → ``shuffle_batch(128)``
(``min_after_dequeue`` 10000, 2 reader threads), read to the end of the
epochs, each batch handed to Python as numpy arrays. Measured, each in
its own process, median of ``--repeat`` runs, the ways taking turns
(round after round, every way once per round, in a new order each
round: on a shared machine the load drifts, so a way's runs back to
back would each meet a different load, and a run can be slowed by the
state its predecessor left, so no way always follows the same one);
besides examples/s, the CPU time of the whole process over the
same span, per example, which the load on the machine moves far less:

- ``rust-plan``: the same graph built and run from Rust
  (``crates/feedstock-py/examples/mnist_plan.rs``), no Python;
- ``rust-front-door`` / ``rust-front-door-graph``: the engine's front
  door from Rust (``feedstock::dataset::Dataset``: parse, a map, a
  shuffle buffer, batches), the map a Rust closure or, as
  ``feedstock.Pipeline(map=...)`` runs it, a ``plan::GraphFn`` of the
  same graph ops;
- ``feedstock-compat-v1``: the guide's code through
  ``import feedstock.compat.v1 as tf``;
- ``feedstock-pipeline``: ``feedstock.Pipeline``;
- ``tf-queues`` / ``tf-data``: TensorFlow's queue pipeline (the same
  source as compat-v1, with ``tensorflow.compat.v1``) and ``tf.data``,
  when ``--tf-python`` names an interpreter with TensorFlow;
- ``tfrecord-torch``: the ``tfrecord`` PyPI package's dataset in a
  ``torch.utils.data.DataLoader`` (``num_workers=0``: its iterable dataset
  would repeat examples across workers), when ``--torch-python`` names an
  interpreter with torch and tfrecord.

``--ways`` runs only some of them. The last line compares
``feedstock.Pipeline`` with the Rust front door running the same map
(``rust-front-door-graph``): the same engine, the same work, the
difference is what crossing into Python costs.

This is a measurement, not a test: it asserts only that every way
delivered every example. Run it with the package built optimised
(``FEEDSTOCK_PY_RELEASE=1 scripts/test-python`` builds it into
``.venv``; the tests' debug build is several times slower):

    .venv/bin/python benches/python/mnist_pipeline.py \
        --tf-python /work/venv-tf/bin/python --torch-python /work/venv-torch/bin/python
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BATCH = 128


def write_files(out_dir, examples, nfiles):
    import numpy as np

    from feedstock.example import BytesList, Example, Feature, Features, Int64List
    from feedstock.tfrecord import TFRecordWriter

    rng = np.random.RandomState(0)
    files = []
    per = examples // nfiles
    for f in range(nfiles):
        path = os.path.join(out_dir, f"mnist-{f}.tfrecord")
        with TFRecordWriter(path) as w:
            for i in range(f * per, (f + 1) * per):
                ex = Example(features=Features(feature={
                    "image_raw": Feature(bytes_list=BytesList(value=[rng.randint(0, 256, 784).astype(np.uint8).tobytes()])),
                    "label": Feature(int64_list=Int64List(value=[i % 10])),
                }))
                w.write(ex.SerializeToString())
        files.append(path)
    return files


# ----------------------------------------------------------------- modes


def input_pipeline(tf, filenames, epochs, min_after):
    """The guide's input_pipeline, for any module with TF1's API."""
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=epochs, shuffle=True)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, features={
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([784])
    image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5
    label = tf.cast(features["label"], tf.int32)
    return tf.train.shuffle_batch([image, label], batch_size=BATCH, capacity=min_after + 3 * BATCH,
                                  min_after_dequeue=min_after, num_threads=2, allow_smaller_final_batch=True)


def run_tf1(tf, files, epochs, min_after):
    images, labels = input_pipeline(tf, files, epochs, min_after)
    init = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
    sess = tf.Session()
    sess.run(init)
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            im, lab = sess.run([images, labels])
            n += lab.shape[0]
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    secs, cpu = time.perf_counter() - start, time.process_time() - cpu
    coord.join(threads)
    sess.close()
    return n, secs, cpu


def mode_compat(files, epochs, min_after):
    import feedstock.compat.v1 as tf

    return run_tf1(tf, files, epochs, min_after)


def mode_pipeline(files, epochs, min_after):
    import feedstock as fs
    from feedstock.compat import v1 as tf

    def decode(ex):
        image = tf.decode_raw(ex["image_raw"], tf.uint8)
        image.set_shape([784])
        return {"image": tf.cast(image, tf.float32) * (1.0 / 255) - 0.5, "label": tf.cast(ex["label"], tf.int32)}

    spec = {"image_raw": fs.FixedLenFeature([], fs.string), "label": fs.FixedLenFeature([], fs.int64)}
    pipe = fs.Pipeline(files, features=spec, map=decode, batch_size=BATCH, num_epochs=epochs,
                       shuffle_buffer=min_after, num_threads=2)
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    for batch in pipe:
        n += batch["label"].shape[0]
    return n, time.perf_counter() - start, time.process_time() - cpu


def mode_tf_queues(files, epochs, min_after):
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    return run_tf1(tf, files, epochs, min_after)


def mode_tf_data(files, epochs, min_after):
    import tensorflow as tf

    spec = {"image_raw": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(serialized):
        f = tf.io.parse_single_example(serialized, spec)
        image = tf.cast(tf.io.decode_raw(f["image_raw"], tf.uint8), tf.float32) * (1.0 / 255) - 0.5
        return image, tf.cast(f["label"], tf.int32)

    ds = (tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat(epochs)
          .interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=tf.data.AUTOTUNE)
          .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
          .shuffle(min_after).batch(BATCH).prefetch(tf.data.AUTOTUNE))
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    for image, label in ds.as_numpy_iterator():
        n += label.shape[0]
    return n, time.perf_counter() - start, time.process_time() - cpu


def mode_tfrecord_torch(files, epochs, min_after):
    import numpy as np
    import torch
    from tfrecord.torch.dataset import TFRecordDataset

    def transform(ex):
        raw = np.frombuffer(ex["image_raw"], np.uint8) if isinstance(ex["image_raw"], bytes) else ex["image_raw"]
        return (raw.astype(np.float32) * (1.0 / 255) - 0.5, np.int32(ex["label"][0]))

    desc = {"image_raw": "byte", "label": "int"}
    parts = [TFRecordDataset(f, None, desc, shuffle_queue_size=min_after // len(files), transform=transform)
             for f in files]
    ds = torch.utils.data.ChainDataset(parts)
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(epochs):
        for image, label in torch.utils.data.DataLoader(ds, batch_size=BATCH, num_workers=0):
            n += int(label.shape[0])
    return n, time.perf_counter() - start, time.process_time() - cpu


def mode_rust(files, epochs, min_after, how="plan"):
    exe = os.path.join(ROOT, "target", "release", "examples", "mnist_plan")
    out = subprocess.run([exe, how, str(epochs), str(min_after), *files], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    return r["examples"], r["seconds"], r["cpu_seconds"]


MODES = {
    "rust-plan": mode_rust,
    "rust-front-door": lambda *a: mode_rust(*a, how="front-door"),
    "rust-front-door-graph": lambda *a: mode_rust(*a, how="front-door-graph"),
    "feedstock-compat-v1": mode_compat,
    "feedstock-pipeline": mode_pipeline,
    "tf-queues": mode_tf_queues,
    "tf-data": mode_tf_data,
    "tfrecord-torch": mode_tfrecord_torch,
}


def run_once(python, mode, files, epochs, min_after):
    """One run of ``mode`` in its own process: (examples/s, CPU µs per
    example), or (None, why it failed)."""
    cmd = [python, os.path.abspath(__file__), "--mode", mode, "--epochs", str(epochs),
           "--min-after", str(min_after), *files]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["examples"] != epochs * r["expected"]:
        return None, f"delivered {r['examples']} of {epochs * r['expected']} examples"
    return (r["examples"] / r["seconds"], 1e6 * r["cpu_seconds"] / r["examples"]), None


def measure(plans, files, epochs, min_after, repeat):
    """Every way of ``plans`` ((mode, python) pairs) ``repeat`` times,
    taking turns; per mode the median examples/s and CPU µs per example
    and every run's pair, or None and why it failed (a way that fails is
    not run again)."""
    runs = {mode: [] for mode, _ in plans}
    failed = {}
    for round_ in range(repeat):
        order = list(plans)
        random.Random(round_).shuffle(order)
        for mode, python in order:
            if mode in failed:
                continue
            r, err = run_once(python, mode, files, epochs, min_after)
            if r is None:
                failed[mode] = err
            else:
                runs[mode].append(r)
    results = {}
    for mode, _ in plans:
        if mode in failed:
            results[mode] = (None, None, failed[mode])
        else:
            rates, cpus = zip(*runs[mode])
            results[mode] = (statistics.median(rates), statistics.median(cpus), runs[mode])
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=MODES)
    ap.add_argument("--ways", help="comma-separated modes to run (default: all that can run)")
    ap.add_argument("--examples", type=int, default=60000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--min-after", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tf-python", help="an interpreter with tensorflow")
    ap.add_argument("--torch-python", help="an interpreter with torch and tfrecord")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()

    if a.mode:
        n, secs, cpu = MODES[a.mode](a.paths, a.epochs, a.min_after)
        print(json.dumps({"examples": n, "seconds": secs, "cpu_seconds": cpu, "expected": _count(a.paths)}))
        return

    plans = [("rust-plan", sys.executable), ("rust-front-door", sys.executable),
             ("rust-front-door-graph", sys.executable), ("feedstock-compat-v1", sys.executable),
             ("feedstock-pipeline", sys.executable)]
    if a.tf_python:
        plans += [("tf-queues", a.tf_python), ("tf-data", a.tf_python)]
    if a.torch_python:
        plans += [("tfrecord-torch", a.torch_python)]
    if a.ways:
        ways = a.ways.split(",")
        unknown = [w for w in ways if w not in MODES]
        if unknown:
            ap.error(f"unknown ways {unknown}: {', '.join(MODES)}")
        plans = [(m, p) for m, p in plans if m in ways]
        missing = [w for w in ways if w not in dict(plans)]
        if missing:
            ap.error(f"{missing} need --tf-python or --torch-python")

    exe = os.path.join(ROOT, "target", "release", "examples", "mnist_plan")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "feedstock-py", "--example", "mnist_plan"],
                   cwd=ROOT, check=True)
    assert os.path.exists(exe)
    with tempfile.TemporaryDirectory() as d:
        files = write_files(d, a.examples, a.files)
        results = measure(plans, files, a.epochs, a.min_after, a.repeat)
    for mode, _ in plans:
        rate, cpu, runs = results[mode]
        each = ", ".join(f"{r / 1000:.0f}k/{c:.2f}" for r, c in runs) if rate else ""
        print(f"  {mode}: {'%.0f examples/s, %.2f CPU us/example (runs %s)' % (rate, cpu, each) if rate else 'skipped: ' + runs}",
              file=sys.stderr)
    rust = results.get("rust-plan", (None,))[0]
    tf_best = max([r[0] for m, r in results.items() if m.startswith("tf-") and r[0]] or [0]) or None
    print(f"\n{a.examples} examples x {a.epochs} epochs, {a.files} files, batch {BATCH}, "
          f"min_after_dequeue {a.min_after}, median of {a.repeat} (the ways taking turns)\n")
    print("| way | examples/s | CPU µs/example | vs Rust | vs TensorFlow's best |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for mode, _ in plans:
        r, cpu, _ = results[mode]
        if r is None:
            print(f"| {mode} | n/a | | | |")
            continue
        vr = f"{r / rust:.2f}x" if rust else ""
        vt = f"{r / tf_best:.1f}x" if tf_best else ""
        print(f"| {mode} | {r:,.0f} | {cpu:.2f} | {vr} | {vt} |")
    py, front = results.get("feedstock-pipeline", (None,)), results.get("rust-front-door-graph", (None,))
    if py[0] and front[0]:
        print(f"\nfeedstock-pipeline / rust-front-door-graph: {py[0] / front[0]:.2f}x examples/s, "
              f"{py[1] / front[1]:.2f}x CPU per example")


def _count(paths):
    # The examples per epoch: records in the files (the same bytes every
    # way reads); counted by framing, without any package.
    import struct

    n = 0
    for p in paths:
        with open(p, "rb") as f:
            while True:
                h = f.read(12)
                if len(h) < 12:
                    break
                (length,) = struct.unpack("<Q", h[:8])
                f.seek(length + 4, 1)
                n += 1
    return n


if __name__ == "__main__":
    main()
