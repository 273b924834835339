"""Deterministic batching cases: tf.compat.v1.train.batch (one thread)
with allow_smaller_final_batch and dynamic_pad, and
string_input_producer order with shuffle=False over num_epochs.

Usage: gen_batch.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import numpy as np
import tensorflow as tf

from tfcommon import enc_array, run_tf, write_cases

v1 = tf.compat.v1


def run_batches(examples, batch_size, small, pad):
    g = tf.Graph()
    with g.as_default():
        q = tf.queue.FIFOQueue(len(examples) + 1, [tf.int64])
        enq = [q.enqueue([np.array(e, dtype=np.int64)]) for e in examples]
        close = q.close()
        x = q.dequeue()
        x.set_shape([None] if pad else [len(examples[0]) if examples
                                         else 0])
        b = v1.train.batch([x], batch_size, num_threads=1, capacity=64,
                           dynamic_pad=pad,
                           allow_smaller_final_batch=small)
        out = []
        with v1.Session(graph=g) as s:
            for e in enq:
                s.run(e)
            s.run(close)
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(s, coord)
            while True:
                try:
                    out.append(enc_array(s.run(b)))
                except tf.errors.OutOfRangeError:
                    break
            coord.request_stop()
            coord.join(threads)
    return out


def run_producer(strings, epochs):
    g = tf.Graph()
    with g.as_default():
        q = v1.train.string_input_producer(strings, num_epochs=epochs,
                                           shuffle=False)
        x = q.dequeue()
        out = []
        with v1.Session(graph=g) as s:
            s.run(v1.local_variables_initializer())
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(s, coord)
            while True:
                try:
                    out.append(s.run(x))
                except tf.errors.OutOfRangeError:
                    break
            coord.request_stop()
            coord.join(threads)
    return [enc_array(np.array(out, dtype=object))]


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 8)
    cases = []
    for i in range(n):
        pad = rng.random() < 0.5
        # Not 0: TF 2.21 crashes (SIGSEGV) batching 7 examples of shape
        # [0] by 2 without allow_smaller_final_batch.
        width = rng.randint(1, 3)
        examples = [[rng.randint(-9, 9) for _ in range(
            rng.randint(0, 4) if pad else width)]
            for _ in range(rng.randint(0, 11))]
        bs = rng.randint(1, 5)
        small = rng.random() < 0.6
        cases.append({"id": f"batch{i}", "area": "batch", "input": {
            "examples": examples, "batch_size": bs, "small": small,
            "pad": pad, "width": width},
            "tf": run_tf(lambda: run_batches(examples, bs, small, pad))})
    for i in range(n // 3):
        strings = [f"f{j}" for j in range(rng.randint(1, 5))]
        epochs = rng.randint(1, 3)
        cases.append({"id": f"prod{i}", "area": "producer", "input": {
            "strings": strings, "epochs": epochs},
            "tf": run_tf(lambda: run_producer(strings, epochs))})
    write_cases(out, cases)


if __name__ == "__main__":
    main()
