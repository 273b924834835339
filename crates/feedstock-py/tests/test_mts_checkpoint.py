"""MonitoredTrainingSession(checkpoint_dir=...) saves and restores the
input position of a deterministic queue-runner graph exactly.

The save schedule is TensorFlow 2.21's (observed with
tensorflow.compat.v1 2.21, graph mode): a checkpoint when the session is
created (``model.ckpt-0``), every ``save_checkpoint_steps`` global steps
(3, 6 with 3) and at close (7 after seven steps); reopening restores the
latest and resumes at its global step; with no global step the session is
refused (RuntimeError). The files are feedstock's own (input.ckpt-N.json).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import feedstock.compat.v1 as tf
from feedstock import errors

FILES, LINES = 4, 7


@pytest.fixture
def csv_files(tmp_path):
    paths = []
    for f in range(FILES):
        p = tmp_path / f"part-{f}.csv"
        p.write_text("".join(f"{f},{i}\n" for i in range(LINES)))
        paths.append(str(p))
    return paths


def build(files, batch_size=3, num_threads=1, batch_seed=7, producer_seed=3, global_step=True):
    """string_input_producer(shuffle, seed, 2 epochs) -> TextLineReader ->
    decode_csv -> shuffle_batch; the global step counts runs."""
    q = tf.train.string_input_producer(files, num_epochs=2, shuffle=True, seed=producer_seed)
    _, line = tf.TextLineReader().read(q)
    f, i = tf.decode_csv(line, [[0], [0]])
    b = tf.train.shuffle_batch([f * 100 + i], batch_size, capacity=20, min_after_dequeue=5, seed=batch_seed,
                               num_threads=num_threads, allow_smaller_final_batch=True)
    if not global_step:
        return b, None
    step = tf.train.get_or_create_global_step()
    return b, tf.assign_add(step, 1)


def run(sess, b, inc, steps=None, got=None):
    """Runs ``steps`` steps (all: until the input ends, which ends the
    ``with`` block), appending the batches to ``got``."""
    got = [] if got is None else got
    while not sess.should_stop() and (steps is None or len(got) < steps):
        got.append(sess.run([b, inc])[0].tolist())
    return got


def uninterrupted(files):
    got = []
    with tf.Graph().as_default():
        b, inc = build(files)
        with tf.train.MonitoredTrainingSession() as s:
            run(s, b, inc, got=got)
    return got


def test_an_uninterrupted_run_is_reproducible(csv_files):
    full = uninterrupted(csv_files)
    assert len(full) == 19 and sorted(sum(full, [])) == sorted(2 * [f * 100 + i for f in range(FILES) for i in range(LINES)])
    assert uninterrupted(csv_files) == full


@pytest.mark.parametrize("stop", [1, 4, 9, 10, 15, 18])
def test_resume_after_close_continues_the_uninterrupted_run(csv_files, tmp_path, stop):
    # Stops mid-epoch (an epoch is 28 records, 9 1/3 batches) and across
    # it, always with records held in the shuffle queue.
    full = uninterrupted(csv_files)
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=4) as s:
            before = run(s, b, inc, stop)
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        step = tf.train.get_global_step()
        after = []
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=4) as s:
            assert s.run(step) == stop
            run(s, b, inc, got=after)
    assert before + after == full


def test_files_written_as_tensorflow_schedules_them(csv_files, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=3) as s:
            run(s, b, inc, 7)
    names = sorted(os.listdir(ckpt))
    # TensorFlow 2.21: model.ckpt-0, -3, -6, -7 (creation, every 3, close).
    assert names == ["input.ckpt-0.json", "input.ckpt-3.json", "input.ckpt-6.json", "input.ckpt-7.json",
                     "input_checkpoint"]
    body = json.loads((tmp_path / "ckpt" / "input.ckpt-6.json").read_text())
    assert body["global_step"] == 6 and body["input_position"] == [["shuffle_batch", 6]]


def test_restores_from_a_periodic_checkpoint_of_a_killed_process(csv_files, tmp_path):
    full = uninterrupted(csv_files)
    ckpt, out = tmp_path / "ckpt", tmp_path / "delivered.txt"
    child = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import feedstock.compat.v1 as tf
        from test_mts_checkpoint import build
        b, inc = build({csv_files!r})
        with open({str(out)!r}, "w") as out, \\
                tf.train.MonitoredTrainingSession(checkpoint_dir={str(ckpt)!r}, save_checkpoint_steps=4) as s:
            while not s.should_stop():
                out.write(repr(s.run([b, inc])[0].tolist()) + "\\n")
                out.flush()
                time.sleep(0.05)
    """)
    p = subprocess.Popen([sys.executable, "-c", child])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 10:
                break
            assert p.poll() is None, "the child ended early"
            time.sleep(0.01)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait()
    assert p.returncode == -signal.SIGKILL
    delivered = [eval(line) for line in out.read_text().splitlines()]
    assert delivered == full[:len(delivered)]
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        step = tf.train.get_global_step()
        after = []
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(ckpt), save_checkpoint_steps=4) as s:
            resumed_at = int(s.run(step))
            run(s, b, inc, got=after)
    # The last checkpoint was at a multiple of 4 at or before the kill.
    assert resumed_at % 4 == 0 and 8 <= resumed_at <= len(delivered)
    assert after == full[resumed_at:]


def flat(batches):
    return sorted(x for b in batches for x in b)


@pytest.mark.parametrize("kw, reason", [
    (dict(num_threads=2), "shuffle_batch runs 2 threads (num_threads=2)"),
    (dict(batch_seed=None), "shuffle_batch shuffles with no seed"),
    (dict(producer_seed=None), "input_producer shuffles with no seed"),
])
def test_a_nondeterministic_graph_saves_the_global_step_and_restarts_its_input(csv_files, tmp_path, kw, reason):
    # TensorFlow runs such a graph with checkpoint_dir (cifar10_train's
    # unseeded producer and threads), restores the global step and reads
    # the input from its start: so does feedstock, warning why the input
    # position is not saved.
    ckpt = str(tmp_path / "ckpt")
    full = flat(uninterrupted(csv_files))
    with tf.Graph().as_default():
        b, inc = build(csv_files, **kw)
        with pytest.warns(UserWarning) as w:
            s = tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=2)
        assert reason in str(w[0].message) and "feedstock.Pipeline.state_dict()" in str(w[0].message)
        with s:
            run(s, b, inc, 3)
    body = json.loads((tmp_path / "ckpt" / "input.ckpt-3.json").read_text())
    assert (body["global_step"], body["input_position"]) == (3, None)
    after = []
    with tf.Graph().as_default():
        b, inc = build(csv_files, **kw)
        with pytest.warns(UserWarning, match="a restart reads the input from its start"):
            s = tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt)
        with s:
            assert int(s.run(tf.train.get_global_step())) == 3
            run(s, b, inc, got=after)
    assert flat(after) == full


def test_summary_dir_is_accepted_and_nothing_is_written(csv_files, tmp_path):
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(summary_dir=str(tmp_path / "s")) as s:
            run(s, b, inc, 2)
    assert not (tmp_path / "s").exists()


def test_a_checkpoint_of_another_input_is_refused(csv_files, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=2) as s:
            run(s, b, inc, 3)
    for other in (dict(batch_size=4), dict(batch_seed=8), dict(files=csv_files[:3])):
        with tf.Graph().as_default():
            b, inc = build(**{"files": csv_files, **other})
            with pytest.raises(ValueError, match="saved from another input"):
                tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt)


def test_checkpoint_dir_needs_a_global_step(csv_files, tmp_path):
    with tf.Graph().as_default():
        build(csv_files, global_step=False)
        with pytest.raises(RuntimeError, match="Global step should be created"):
            tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path))


def test_a_checkpoint_at_the_end_resumes_at_the_end(csv_files, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=100) as s:
            run(s, b, inc)
    after = []
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt) as s:
            run(s, b, inc, got=after)
    assert after == []


def user_queue_graph(threads):
    """range_input_producer -> a FIFOQueue filled by a QueueRunner of
    ``threads`` enqueue ops -> dequeue, with a global step."""
    p = tf.train.range_input_producer(10, num_epochs=2, seed=1)
    fq = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(fq, [fq.enqueue(p.dequeue())] * threads))
    return fq.dequeue(), tf.assign_add(tf.train.get_or_create_global_step(), 1)


def test_a_queue_runner_with_one_thread_resumes_and_with_two_is_named(tmp_path):
    full = []
    with tf.Graph().as_default():
        x, inc = user_queue_graph(1)
        with tf.train.MonitoredTrainingSession() as s:
            run(s, x, inc, got=full)
    assert sorted(full) == sorted(2 * list(range(10)))
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        x, inc = user_queue_graph(1)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=5) as s:
            before = run(s, x, inc, 7)
    after = []
    with tf.Graph().as_default():
        x, inc = user_queue_graph(1)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt) as s:
            run(s, x, inc, got=after)
    assert before + after == full
    with tf.Graph().as_default():
        user_queue_graph(2)
        with pytest.warns(UserWarning, match="the queue runner of fifo_queue runs 2 threads"):
            tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt2")).close()


def test_two_dequeues_of_one_queue_save_the_global_step_only(tmp_path):
    # How the program's two dequeues interleaved is not kept, so the
    # position would misdeal on replay: the checkpoint holds the step alone.
    ckpt = tmp_path / "ckpt"
    with tf.Graph().as_default():
        p = tf.train.range_input_producer(10, num_epochs=2, seed=1)
        fq = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(fq, [fq.enqueue(p.dequeue())]))
        x1, x2 = fq.dequeue(), fq.dequeue()
        inc = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        with pytest.warns(UserWarning, match="both take from fifo_queue"):
            with tf.train.MonitoredTrainingSession(checkpoint_dir=str(ckpt), save_checkpoint_steps=2) as s:
                s.run([x1, inc])
                s.run([x2, inc])
    body = json.loads((ckpt / "input.ckpt-2.json").read_text())
    assert (body["global_step"], body["input_position"]) == (2, None)


def test_an_unseeded_random_op_is_named_and_a_graph_seed_seeds_it(csv_files, tmp_path):
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        tf.random_uniform([3])
        with pytest.warns(UserWarning, match=r"random_uniform/RandomUniform \(RandomUniform\) has no seed"):
            tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "unseeded")).close()
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        b, inc = build(csv_files)
        tf.random_uniform([3])
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt"), save_checkpoint_steps=2) as s:
            run(s, b, inc, 2)
    assert os.path.exists(tmp_path / "ckpt" / "input.ckpt-2.json")


@pytest.mark.parametrize("kw, want", [
    # TensorFlow 2.21: neither given is every 600 s (so here at creation
    # and close only); both None is no saver at all.
    (dict(), ["input.ckpt-0.json", "input.ckpt-5.json", "input_checkpoint"]),
    (dict(save_checkpoint_secs=None, save_checkpoint_steps=None), []),
    # Both given: the seconds are used, TensorFlow's rule.
    (dict(save_checkpoint_secs=600, save_checkpoint_steps=1), ["input.ckpt-0.json", "input.ckpt-5.json",
                                                               "input_checkpoint"]),
])
def test_default_and_disabled_save_intervals(csv_files, tmp_path, kw, want):
    ckpt = tmp_path / "ckpt"
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(ckpt), **kw) as s:
            run(s, b, inc, 5)
    assert (sorted(os.listdir(ckpt)) if ckpt.exists() else []) == want


def test_a_damaged_checkpoint_is_refused_naming_it(csv_files, tmp_path):
    ckpt = tmp_path / "ckpt"
    with tf.Graph().as_default():
        b, inc = build(csv_files)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(ckpt), save_checkpoint_steps=2) as s:
            run(s, b, inc, 2)
    (ckpt / "input.ckpt-2.json").write_text('{"format": "feedstock-input-checkpoint", "vers')
    with tf.Graph().as_default() as g:
        build(csv_files)
        with pytest.raises(ValueError, match=r"input.ckpt-2.json: not a feedstock input checkpoint"):
            tf.train.MonitoredTrainingSession(checkpoint_dir=str(ckpt))
        # The graph is open again, as after a session that closed.
        assert not g.finalized
