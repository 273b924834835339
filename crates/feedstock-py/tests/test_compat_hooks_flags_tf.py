"""Flags read before ``tf.app.run``, the stock session-run hooks, and
names outside the input system. Expected values are what TensorFlow
2.21's ``tf.compat.v1`` was seen doing with the same programs (absl-py
2.5.1 under it)."""

import logging
import subprocess
import sys
import textwrap

import pytest

import feedstock.compat.v1 as tf
from feedstock import _app, errors


def _flags():
    fv = _app._FlagValues()
    _app.DEFINE_integer("batch_size", 128, "batch", flag_values=fv)
    _app.DEFINE_string("data_dir", "/tmp/d", "dir", flag_values=fv)
    _app.DEFINE_boolean("log", False, "log", flag_values=fv)
    return fv


def test_a_flag_read_before_run_parses_sys_argv(monkeypatch):
    # TF: `python prog.py --batch_size=4 --data_dir /x pos` then
    # FLAGS.batch_size before tf.app.run -> 4, "/x"; is_parsed() turns True.
    monkeypatch.setattr(sys, "argv", ["prog", "--batch_size=4", "--data_dir", "/x", "pos", "--log"])
    fv = _flags()
    assert not fv.is_parsed()
    assert (fv.batch_size, fv.data_dir, fv.log) == (4, "/x", True)
    assert fv.is_parsed()
    # TF: the last of repeated flags wins; after `--` nothing is a flag.
    monkeypatch.setattr(sys, "argv", ["prog", "--batch_size=1", "--batch_size=2", "--", "--log"])
    fv = _flags()
    assert (fv.batch_size, fv.log) == (2, False)


def test_a_value_set_before_the_first_read_stays_unless_argv_has_it(monkeypatch):
    # TF: FLAGS.batch_size = 7 leaves FLAGS unparsed; the first read parses
    # argv, whose --batch_size=4 wins; without it 7 stays.
    for argv, want in ((["prog", "--batch_size=4"], 4), (["prog"], 7)):
        monkeypatch.setattr(sys, "argv", argv)
        fv = _flags()
        fv.batch_size = 7
        assert not fv.is_parsed()
        assert fv.batch_size == want


@pytest.mark.parametrize(
    "arg, cls, message",
    [
        ("--unknown=1", _app.UnrecognizedFlagError, "Unknown command line flag 'unknown'"),
        ("--help", _app.UnrecognizedFlagError, "Unknown command line flag 'help'"),
        ("--bat=3", _app.UnrecognizedFlagError, "Unknown command line flag 'bat'. Did you mean: batch_size ?"),
        ("--batch_size=abc", _app.IllegalFlagValueError,
         "flag --batch_size=abc: invalid literal for int() with base 10: 'abc'"),
        ("--log=maybe", _app.IllegalFlagValueError,
         "flag --log=maybe: ('Non-boolean argument to boolean flag', 'maybe')"),
        ("--batch_size", _app.Error, "Missing value for flag --batch_size"),
    ],
)
def test_a_bad_argv_fails_the_first_read_as_tensorflow(monkeypatch, arg, cls, message):
    monkeypatch.setattr(sys, "argv", ["prog", "--data_dir=/y", arg])
    fv = _flags()
    for _ in range(2):
        # TF: the same error on every read, the flags stay unparsed, and
        # the flags before the bad one are set.
        with pytest.raises(cls) as e:
            fv.batch_size
        assert type(e.value) is cls and str(e.value) == message
        assert not fv.is_parsed() and fv["data_dir"].value == "/y"
    # TF: hasattr parses too, so it raises the same error.
    with pytest.raises(cls):
        hasattr(fv, "nope")


def test_hasattr_of_an_undefined_flag_parses_and_answers_false(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--log"])
    fv = _flags()
    assert not hasattr(fv, "nope") and fv.is_parsed() and fv.log is True


def _script(tmp_path, body, *args):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, path.name, *args], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)


PROGRAM = """
    import feedstock.compat.v1 as tf
    tf.app.flags.DEFINE_integer("batch_size", 128, "Number of images\\nper batch.")
    tf.app.flags.DEFINE_string("data_dir", "/tmp/d", "Where the data is.")
    tf.app.flags.DEFINE_boolean("log", False, "log")
    tf.app.flags.DEFINE_float("lr", 0.1, "rate")
    tf.app.flags.DEFINE_list("names", "a,b", "names")
    tf.app.flags.DEFINE_enum("mode", "train", ["train", "eval"], "mode")
    tf.app.flags.DEFINE_string("nodefault", None, "No default.")
    FLAGS = tf.app.flags.FLAGS

    def main(argv):
        print("main", argv[1:], FLAGS.batch_size)
        return 3

    tf.app.run()
"""

# TF's output for PROGRAM run with --help, --helpshort, -help or -?.
HELP = """
       USAGE: prog.py [flags]
flags:

prog.py:
  --batch_size: Number of images
    per batch.
    (default: '128')
    (an integer)
  --data_dir: Where the data is.
    (default: '/tmp/d')
  --[no]log: log
    (default: 'false')
  --lr: rate
    (default: '0.1')
    (a number)
  --mode: <train|eval>: mode
    (default: 'train')
  --names: names
    (default: 'a,b')
    (a comma separated list)
  --nodefault: No default.

Try --helpfull to get a list of all flags.
"""


def test_app_run_prints_help_and_exits_1_as_absl(tmp_path):
    for arg in ("--help", "--helpshort", "-help"):
        done = _script(tmp_path, PROGRAM, arg)
        assert (done.returncode, done.stdout) == (1, HELP), done.stderr
    # TF: -h is no help flag; unknown flags and absl's own go through run.
    done = _script(tmp_path, PROGRAM, "-h", "--unknown", "x", "--logtostderr", "--batch_size=5")
    assert (done.returncode, done.stdout) == (3, "main ['-h', '--unknown', 'x'] 5\n"), done.stderr


def test_stop_at_step_hook_needs_a_global_step():
    # TF: RuntimeError from begin, while the session is created.
    with pytest.raises(ValueError, match="^One of num_steps or last_step must be specified.$"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="^Only one of num_steps or last_step can be specified.$"):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)
    with tf.Graph().as_default():
        x = tf.constant(1)
        with pytest.raises(RuntimeError, match="^Global step should be created to use StopAtStepHook.$"):
            tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=2)])
        assert x.graph is tf.get_default_graph()


def test_global_step_as_tensorflow():
    with tf.Graph().as_default():
        assert tf.train.get_global_step() is None
        gs = tf.train.create_global_step()
        assert (gs.name, gs.dtype, gs.shape.as_list()) == ("global_step:0", tf.int64, [])
        with pytest.raises(ValueError, match='^"global_step" already exists.$'):
            tf.train.create_global_step()
        assert tf.train.get_or_create_global_step() is gs and tf.train.get_global_step() is gs
        assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs]
        assert tf.global_variables() == [gs] and tf.trainable_variables() == []
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            v = tf.train.global_step(s, gs)
        assert v == 0 and type(v) is int


@pytest.mark.parametrize(
    "kind, n, runs",
    [
        # TF: [train, gs] of each run; gs reads the value before the run.
        ("num_steps", 3, [[1, 0], [2, 1], [3, 2]]),
        ("last_step", 4, [[1, 0], [2, 1], [3, 2], [4, 3]]),
        ("last_step", 0, [[1, 0]]),
    ],
)
def test_stop_at_step_hook_stops_where_tensorflow_does(kind, n, runs):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        train = tf.assign_add(gs, 1)
        got = []
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(**{kind: n})]) as s:
            while not s.should_stop():
                got.append([int(v) for v in s.run([train, gs])])
                assert len(got) <= 10
            # TF: a run after the stop request is refused.
            with pytest.raises(RuntimeError, match="^Run called even after should_stop requested.$"):
                s.run(gs)
        assert got == runs


def test_stop_at_step_hook_never_stops_on_a_step_nothing_increments():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        x = tf.constant(2)
        with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)]) as s:
            for _ in range(4):
                assert s.run(x) == 2
            assert not s.should_stop()


class _End(tf.train.SessionRunHook):
    def __init__(self):
        self.ended = False

    def end(self, session):
        self.ended = True


def _nan_run(fail, values, caplog):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [])
        y = p * 2
        end = _End()
        out = []
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(p, fail_on_nan_loss=fail), end]) as s:
                for v in values:
                    out.append((float(s.run(y, feed_dict={p: v})), s.should_stop()))
        return out, end.ended, [(r.levelname, r.getMessage()) for r in caplog.records]


def test_nan_tensor_hook_fails_or_stops_as_tensorflow(caplog):
    nan = float("nan")
    # TF: fail_on_nan_loss raises NanLossDuringTrainingError (a
    # RuntimeError, "NaN loss during training.") out of the with block,
    # hooks' end not called, ERROR logged.
    with pytest.raises(tf.train.NanLossDuringTrainingError) as e:
        _nan_run(True, [1.0, nan, 2.0], caplog)
    assert isinstance(e.value, RuntimeError) and str(e.value) == "NaN loss during training."
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("ERROR", "Model diverged with loss = NaN.")]
    # TF: otherwise a WARNING and a stop request after the NaN run.
    with pytest.raises(RuntimeError, match="^Run called even after should_stop requested.$"):
        _nan_run(False, [1.0, nan, 2.0], caplog)
    out, ended, logged = _nan_run(False, [1.0, nan], caplog)
    assert out[0] == (2.0, False) and out[1][1] is True and ended
    assert logged == [("WARNING", "Model diverged with loss = NaN.")]
    # TF: infinity is no NaN.
    assert _nan_run(True, [float("inf")], caplog)[:2] == ([(float("inf"), False)], True)


def _logged(caplog, runs=5, **kw):
    with tf.Graph().as_default():
        c = tf.Variable(tf.constant(0, tf.int64), name="c")
        inc = tf.assign_add(c, 1)
        f = tf.constant([1.5, 2.25], name="f")
        tensors = kw.pop("tensors", {"count": inc, "f": f})
        if tensors == "names":
            tensors = ["f:0"]
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            with tf.train.MonitoredSession(hooks=[tf.train.LoggingTensorHook(tensors, **kw)]) as s:
                for _ in range(runs):
                    s.run(inc)
        return [r.getMessage() for r in caplog.records if r.levelname == "INFO"]


def _untimed(lines):
    import re

    return [re.sub(r" \(\d+\.\d{3} sec\)$", " (T sec)", line) for line in lines]


def test_logging_tensor_hook_logs_what_tensorflow_logs(caplog):
    # TF's lines for each configuration (the seconds since the last line vary).
    assert _untimed(_logged(caplog, every_n_iter=2)) == [
        "count = 1, f = [1.5  2.25]", "count = 3, f = [1.5  2.25] (T sec)", "count = 5, f = [1.5  2.25] (T sec)"]
    assert _untimed(_logged(caplog, at_end=True)) == ["count = 6, f = [1.5  2.25]"]
    assert _untimed(_logged(caplog, at_end=True, every_n_iter=4)) == [
        "count = 1, f = [1.5  2.25]", "count = 5, f = [1.5  2.25] (T sec)", "count = 6, f = [1.5  2.25] (T sec)"]
    assert _untimed(_logged(caplog, every_n_secs=3600)) == ["count = 1, f = [1.5  2.25]"]
    assert _logged(caplog, every_n_iter=2, formatter=lambda d: "F " + repr(sorted(d))) == ["F ['count', 'f']"] * 3
    assert _untimed(_logged(caplog, tensors="names", every_n_iter=3)) == [
        "f:0 = [1.5  2.25]", "f:0 = [1.5  2.25] (T sec)"]


def test_logging_tensor_hook_arguments_as_tensorflow():
    msg = "^either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.$"
    with pytest.raises(ValueError, match=msg):
        tf.train.LoggingTensorHook({"a": 1})
    with pytest.raises(ValueError, match=msg):
        tf.train.LoggingTensorHook({"a": 1}, every_n_iter=1, every_n_secs=1)
    with pytest.raises(ValueError, match=r"^invalid every_n_iter=0\.$"):
        tf.train.LoggingTensorHook({"a": 1}, every_n_iter=0)
    tf.train.LoggingTensorHook({"a": 1}, every_n_secs=-1)  # TF accepts it


@pytest.mark.parametrize(
    "get, path",
    [
        (lambda: tf.nn, "tf.nn"),
        (lambda: tf.layers, "tf.layers"),
        (lambda: tf.keras, "tf.keras"),
        (lambda: tf.losses, "tf.losses"),
        (lambda: tf.train.AdamOptimizer, "tf.train.AdamOptimizer"),
        (lambda: tf.train.GradientDescentOptimizer, "tf.train.GradientDescentOptimizer"),
        (lambda: tf.image.total_variation, "tf.image.total_variation"),
    ],
)
def test_a_name_outside_the_input_system_says_so(get, path):
    # TF has these; feedstock's error says what it covers and how to hand
    # the batches to a model, and is an AttributeError.
    with pytest.raises(errors.OutsideInputSystemError) as e:
        get()
    text = str(e.value)
    assert isinstance(e.value, AttributeError)
    assert text.startswith(f"{path} is not in feedstock.compat.v1.")
    for words in ("input system", "numpy arrays", "torch.from_numpy", "jax.numpy.asarray", "Keras"):
        assert words in text, words


def test_a_misspelt_name_gets_the_nearest_names():
    with pytest.raises(errors.OutsideInputSystemError, match=r"Did you mean: tf\.train\.shuffle_batch,"):
        tf.train.shuffle_bach
    with pytest.raises(errors.OutsideInputSystemError, match=r"Did you mean: tf\.image\.resize_images\?"):
        tf.image.resiz_images


def test_hasattr_getattr_and_introspection_still_work():
    import inspect

    assert not hasattr(tf, "nn") and not hasattr(tf.train, "AdamOptimizer")
    assert hasattr(tf, "train") and hasattr(tf.train, "batch") and hasattr(tf, "constant")
    assert getattr(tf, "nn", None) is None and getattr(tf.image, "nope", 5) == 5
    # Private and dunder names get Python's own plain AttributeError.
    with pytest.raises(AttributeError) as e:
        tf.__path__
    assert type(e.value) is AttributeError and str(e.value) == "module 'feedstock.compat.v1' has no attribute '__path__'"
    with pytest.raises(AttributeError) as e:
        tf.train._private
    assert type(e.value) is AttributeError
    names = dict(inspect.getmembers(tf))
    assert names["train"] is tf.train and "batch" in vars(tf.train) and "nn" not in names
