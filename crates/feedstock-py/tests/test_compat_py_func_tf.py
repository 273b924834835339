"""tf.py_func in compat.v1: what the function receives and must return,
its errors, and its use inside queue runners; every expectation was
observed with TensorFlow 2.21 (graph mode)."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run


def test_arguments_and_results_as_tensorflow():
    seen = []

    def show(*args):
        seen.extend((type(a).__name__, getattr(a, "dtype", None), getattr(a, "shape", None)) for a in args)
        return np.float32(1.0)

    ins = [tf.constant(3), tf.constant("s"), tf.constant([1.5, 2.5]), tf.constant([b"a", b"b"])]
    out = tf.py_func(show, ins, tf.float32)
    assert out.name == "PyFunc:0" and out.shape.ndims is None
    assert run(out) == np.float32(1.0)
    # Scalars as numpy scalars, a string scalar as bytes, arrays as arrays.
    assert [s[0] for s in seen] == ["int32", "bytes", "ndarray", "ndarray"]
    assert seen[2][1:] == (np.float32, (2,)) and seen[3][1] == object

    two = tf.py_func(lambda x: (x * 2, np.int64(7)), [tf.constant([1.0, 2.0])], [tf.float32, tf.int64], name="twice")
    assert [t.name for t in two] == ["twice:0", "twice:1"]
    got = run(two)
    assert got[0].tolist() == [2.0, 4.0] and got[1] == 7 and got[1].dtype == np.int64
    assert run(tf.py_func(lambda: "héllo", [], tf.string)) == "héllo".encode()
    assert run(tf.py_func(lambda: 1.5, [], tf.float64)) == 1.5
    assert run(tf.py_func(lambda: (np.float32(1),), [], (tf.float32,)))[0] == 1.0


@pytest.mark.parametrize(
    "func, tout, error, message",
    [
        (lambda: 1.5, tf.float32, tf.errors.InvalidArgumentError, r"0-th value returned by pyfunc_\d+ is double, but expects float"),
        (lambda: 3, tf.int32, tf.errors.InvalidArgumentError, r"is int64, but expects int32"),
        (lambda: [1.0, 2.0], tf.float32, tf.errors.InvalidArgumentError, r"returns 2 values, but expects to see 1 values"),
        (lambda: int("x"), tf.int64, tf.errors.InvalidArgumentError, r"ValueError: invalid literal"),
        (lambda: {}["k"], tf.float32, tf.errors.UnknownError, r"KeyError: 'k'"),
        (lambda: next(iter([])), tf.float32, tf.errors.OutOfRangeError, r"StopIteration"),
    ],
)
def test_errors_as_tensorflow(func, tout, error, message):
    with pytest.raises(error, match=message):
        run(tf.py_func(func, [], tout))


def test_runs_in_queue_runners_and_stop_iteration_ends_the_input():
    def load(name):
        n = int(name.decode().split("-")[1])
        return np.full([2, 2], n, np.float32), np.int64(n)

    q = tf.train.string_input_producer([f"f-{i}" for i in range(10)], num_epochs=2, shuffle=False)
    image, label = tf.py_func(load, [q.dequeue()], [tf.float32, tf.int64])
    image.set_shape([2, 2])
    label.set_shape([])
    images, labels = tf.train.batch([image, label], 4, num_threads=2, allow_smaller_final_batch=True)
    it = iter(range(5))
    counted = tf.py_func(lambda: np.int64(next(it)), [], tf.int64)
    counted.set_shape([])
    counts = tf.train.batch([counted], 2, allow_smaller_final_batch=True)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                x, y = sess.run([images, labels])
                assert (x[:, 0, 0] == y).all()
                got += y.tolist()
        assert sorted(got) == sorted(list(range(10)) * 2)
        seen = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                seen += sess.run(counts).tolist()
        assert sorted(seen) == [0, 1, 2, 3, 4]
        coord.request_stop()
        coord.join(threads)


EXIT_SCRIPT = """
import time
import numpy as np
import feedstock.compat.v1 as tf
q = tf.train.string_input_producer(["a", "b"])
v = tf.py_func(lambda s: (time.sleep(0.001), np.int64(len(s)))[1], [q.dequeue()], tf.int64)
v.set_shape([])
b = tf.train.batch([v], 4)
sess = tf.Session()
threads = tf.train.start_queue_runners(sess, tf.train.Coordinator())
print(sess.run(b).tolist())
"""


def test_exiting_with_runners_inside_a_python_function_is_clean():
    # The program never stops its runners: at exit they are inside, or
    # about to enter, the Python function. Entering a finalizing
    # interpreter would abort the process.
    import subprocess
    import sys

    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "[1, 1, 1, 1]"


def test_print_as_tensorflow(capfd):
    x = tf.constant([[1, 2, 3], [4, 5, 6]])
    y = tf.constant([1.5, 2.5])
    p = tf.Print(x, [x, y, tf.constant("s")], "msg: ")
    assert p.name == "Print:0" and p.shape.as_list() == [2, 3]
    with tf.Session() as sess:
        assert sess.run(p).tolist() == [[1, 2, 3], [4, 5, 6]]
        sess.run(tf.Print(y, [tf.constant(np.arange(10))], message="long "))
        once = tf.Print(y, [y], "once ", first_n=1, summarize=10)
        sess.run(once)
        sess.run(once)
    # TensorFlow's format: the first `summarize` values, nested, "...".
    assert capfd.readouterr().err.splitlines() == ["msg: [[1 2 3]...][1.5 2.5][s]", "long [0 1 2...]", "once [1.5 2.5]"]
