"""Helpers shared by the compat.v1 tests (not a test module)."""

import feedstock.compat.v1 as tf


def drain(fetch):
    """Every value of ``fetch`` until OutOfRange, in a session whose
    local variables are initialized and whose runners are stopped and
    joined at the end."""
    out = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while True:
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    return out


def run(fetches, feed_dict=None):
    """``fetches`` run once in a new session."""
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict=feed_dict)
