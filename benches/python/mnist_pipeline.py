#!/usr/bin/env python3
"""Throughput of the seed's MNIST-like input pipeline, every way, in one run.

TFRecord files of ``tf.train.Example`` (784 raw bytes + an int64 label)
→ parse → ``decode_raw`` → cast and scale → ``shuffle_batch(128)``
(``min_after_dequeue`` 10000, 2 reader threads), read to the end of the
epochs, each batch handed to Python as numpy arrays. Measured, each in
its own process, median of ``--repeat`` runs:

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

This is a measurement, not a test: it asserts only that every way
delivered every example. Run it with the package installed
(``scripts/test-python`` builds it into ``.venv``):

    .venv/bin/python benches/python/mnist_pipeline.py \
        --tf-python /work/venv-tf/bin/python --torch-python /work/venv-torch/bin/python
"""

import argparse
import json
import os
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
    start = time.perf_counter()
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
    secs = time.perf_counter() - start
    coord.join(threads)
    sess.close()
    return n, secs


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
    start = time.perf_counter()
    for batch in pipe:
        n += batch["label"].shape[0]
    return n, time.perf_counter() - start


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
    start = time.perf_counter()
    for image, label in ds.as_numpy_iterator():
        n += label.shape[0]
    return n, time.perf_counter() - start


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
    start = time.perf_counter()
    for _ in range(epochs):
        for image, label in torch.utils.data.DataLoader(ds, batch_size=BATCH, num_workers=0):
            n += int(label.shape[0])
    return n, time.perf_counter() - start


def mode_rust(files, epochs, min_after, how="plan"):
    exe = os.path.join(ROOT, "target", "release", "examples", "mnist_plan")
    out = subprocess.run([exe, how, str(epochs), str(min_after), *files], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    return r["examples"], r["seconds"]


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


def measure(python, mode, files, epochs, min_after, repeat):
    rates = []
    for _ in range(repeat):
        cmd = [python, os.path.abspath(__file__), "--mode", mode, "--epochs", str(epochs),
               "--min-after", str(min_after), *files]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        if out.returncode != 0:
            return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["examples"] != epochs * r["expected"]:
            return None, f"delivered {r['examples']} of {epochs * r['expected']} examples"
        rates.append(r["examples"] / r["seconds"])
    return statistics.median(rates), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=MODES)
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
        n, secs = MODES[a.mode](a.paths, a.epochs, a.min_after)
        print(json.dumps({"examples": n, "seconds": secs, "expected": _count(a.paths)}))
        return

    exe = os.path.join(ROOT, "target", "release", "examples", "mnist_plan")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "feedstock-py", "--example", "mnist_plan"],
                   cwd=ROOT, check=True)
    assert os.path.exists(exe)
    with tempfile.TemporaryDirectory() as d:
        files = write_files(d, a.examples, a.files)
        plans = [("rust-plan", sys.executable), ("rust-front-door", sys.executable),
                 ("rust-front-door-graph", sys.executable), ("feedstock-compat-v1", sys.executable),
                 ("feedstock-pipeline", sys.executable)]
        if a.tf_python:
            plans += [("tf-queues", a.tf_python), ("tf-data", a.tf_python)]
        if a.torch_python:
            plans += [("tfrecord-torch", a.torch_python)]
        results = {}
        for mode, python in plans:
            rate, err = measure(python, mode, files, a.epochs, a.min_after, a.repeat)
            results[mode] = rate
            print(f"  {mode}: {'%.0f examples/s' % rate if rate else 'skipped: ' + err}", file=sys.stderr)
    rust = results.get("rust-plan")
    tf_best = max([r for m, r in results.items() if m.startswith("tf-") and r] or [0]) or None
    print(f"\n{a.examples} examples x {a.epochs} epochs, {a.files} files, batch {BATCH}, "
          f"min_after_dequeue {a.min_after}, median of {a.repeat}\n")
    print("| way | examples/s | vs Rust | vs TensorFlow's best |")
    print("| --- | ---: | ---: | ---: |")
    for mode, _ in plans:
        r = results.get(mode)
        if r is None:
            print(f"| {mode} | n/a | | |")
            continue
        vr = f"{r / rust:.2f}x" if rust else ""
        vt = f"{r / tf_best:.1f}x" if tf_best else ""
        print(f"| {mode} | {r:,.0f} | {vr} | {vt} |")


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
