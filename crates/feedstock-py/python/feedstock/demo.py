"""``python -m feedstock.demo``: the Python path, end to end, on the
shipped digits (``data/digits.csv.gz``: 1797 8x8 handwritten digits).

1. Writes the CSV rows as ``tf.train.Example`` records into sharded
   TFRecord files (``tf.python_io.TFRecordWriter``), holding out a test
   shard.
2. Trains a softmax-regression classifier (plain numpy) from the guide's
   pipeline, through ``import feedstock.compat.v1 as tf``:
   ``string_input_producer`` → ``TFRecordReader`` →
   ``parse_single_example`` → scale → ``shuffle_batch``, several epochs,
   ending at ``OutOfRangeError``.
3. Evaluates on the held-out shard with ``feedstock.Pipeline``.

Prints examples/s, how full the example queue was, and the test accuracy.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time

import numpy as np

import feedstock as fs
import feedstock.compat.v1 as tf

DEFAULT_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "data", "digits.csv.gz")


def convert(csv_gz, out_dir, shards=4, test_every=5):
    """CSV rows (64 pixels, label) to TFRecord shards; every
    ``test_every``-th row goes to the test file. Returns (train, test)."""
    os.makedirs(out_dir, exist_ok=True)
    train = [os.path.join(out_dir, f"digits-train-{i}.tfrecord") for i in range(shards)]
    test = os.path.join(out_dir, "digits-test.tfrecord")
    writers = [tf.python_io.TFRecordWriter(p) for p in train]
    test_writer = tf.python_io.TFRecordWriter(test)
    with gzip.open(csv_gz, "rt") as f:
        for i, line in enumerate(f):
            values = [int(v) for v in line.split(",")]
            ex = tf.train.Example(features=tf.train.Features(feature={
                "pixels": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes(values[:64])])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[values[64]])),
            }))
            w = test_writer if i % test_every == 0 else writers[i % shards]
            w.write(ex.SerializeToString())
    for w in writers + [test_writer]:
        w.close()
    return train, test


def decode(serialized):
    features = tf.parse_single_example(serialized, features={
        "pixels": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.decode_raw(features["pixels"], tf.uint8)
    image.set_shape([64])
    return tf.cast(image, tf.float32) / 16.0, tf.cast(features["label"], tf.int32)


def train(files, epochs, batch_size, seed, lr=0.5):
    tf.reset_default_graph()
    filename_queue = tf.train.string_input_producer(files, num_epochs=epochs, shuffle=True, seed=seed)
    _, serialized = tf.TFRecordReader().read(filename_queue)
    image, label = decode(serialized)
    min_after_dequeue = 500
    images, labels = tf.train.shuffle_batch(
        [image, label], batch_size=batch_size, capacity=min_after_dequeue + 3 * batch_size,
        min_after_dequeue=min_after_dequeue, num_threads=2, seed=seed, allow_smaller_final_batch=True)

    rng = np.random.RandomState(seed)
    w = rng.normal(0, 0.01, (64, 10)).astype(np.float32)
    b = np.zeros(10, np.float32)
    seen, fullness = 0, []
    sess = tf.Session()
    sess.run(tf.group(tf.global_variables_initializer(), tf.local_variables_initializer()))
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    start = time.perf_counter()
    try:
        while not coord.should_stop():
            x, y = sess.run([images, labels])
            logits = x @ w + b
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(y)), y] -= 1
            w -= lr * x.T @ p / len(y)
            b -= lr * p.mean(0)
            seen += len(y)
            fullness.extend(v for k, v in sess.queue_summaries().items() if k.endswith("_full") and "over" not in k
                            and "shuffle_batch" in k)
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads)
    secs = time.perf_counter() - start
    sess.close()
    return w, b, seen, secs, (float(np.mean(fullness)) if fullness else 0.0)


def evaluate(test_file, w, b):
    spec = {"pixels": fs.FixedLenFeature([], fs.string), "label": fs.FixedLenFeature([], fs.int64)}

    def features(ex):
        image, label = decode_parsed(ex)
        return {"image": image, "label": label}

    right = total = 0
    for batch in fs.Pipeline(test_file, features=spec, map=features, batch_size=256, shuffle=False):
        pred = (batch["image"] @ w + b).argmax(1)
        right += int((pred == batch["label"]).sum())
        total += len(pred)
    return right / total, total


def decode_parsed(ex):
    image = tf.decode_raw(ex["pixels"], tf.uint8)
    image.set_shape([64])
    return tf.cast(image, tf.float32) / 16.0, tf.cast(ex["label"], tf.int32)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m feedstock.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.normpath(DEFAULT_DATA), help="the digits CSV (gzip)")
    ap.add_argument("--out-dir", default="out/py-demo", help="where the TFRecord shards go")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    if not os.path.exists(a.data):
        ap.error(f"no data at {a.data}: pass --data path/to/digits.csv.gz")
    train_files, test_file = convert(a.data, a.out_dir)
    print(f"wrote {len(train_files)} training shards and a test shard to {a.out_dir}")
    w, b, seen, secs, fullness = train(train_files, a.epochs, a.batch_size, a.seed)
    print(f"trained on {seen} examples ({a.epochs} epochs) in {secs:.2f}s: {seen / secs:,.0f} examples/s; "
          f"example queue {100 * fullness:.0f}% full on average")
    acc, n = evaluate(test_file, w, b)
    print(f"test accuracy {100 * acc:.1f}% on {n} held-out digits")
    return acc


if __name__ == "__main__":
    sys.exit(0 if main() > 0.5 else 1)
