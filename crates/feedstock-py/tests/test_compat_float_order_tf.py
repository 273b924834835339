"""Float results that depend on the order TensorFlow computes them in:
reductions (Eigen's order of addition) and divisions by a constant
(which TensorFlow's graph optimizer turns into multiplications by the
reciprocal). Every expected bit pattern below was observed with
TensorFlow 2.21 (``tensorflow.compat.v1``, graph mode, x86-64)."""

import hashlib

import numpy as np

import feedstock.compat.v1 as tf
from compat_support import run


def ramp(n, dtype=np.float32):
    """Values of many magnitudes, so that each order of addition gives
    its own sum."""
    k = np.arange(n)
    return (((k * 7919) % 1000) * 0.0137 - 3.1).astype(dtype)


def bits(v):
    v = np.asarray(v)
    return v.reshape(-1).view(np.uint32 if v.dtype == np.float32 else np.uint64).tolist()


def digest(v):
    return hashlib.sha256(np.asarray(v).tobytes()).hexdigest()[:16]


def test_full_sums_follow_eigens_order():
    # 33 values: four packet accumulators and a tail; 9000: halves split
    # at a packet; 100 000: still one thread in TensorFlow's cost model.
    got = run({n: tf.reduce_sum(tf.constant(ramp(n))) for n in (33, 1728, 9000, 100000)})
    assert {n: bits(v) for n, v in got.items()} == {
        33: [1124452165],
        1728: [1170860562],
        9000: [1191417946],
        100000: [1219937632],
    }
    naive = np.float32(0)
    for v in ramp(9000):
        naive = np.float32(naive + v)
    assert bits(naive) != [1191417946]


def test_means_products_and_doubles_as_tensorflow():
    got = run(
        {
            "mean": tf.reduce_mean(tf.constant(ramp(9000))),
            "f64": tf.reduce_sum(tf.constant(ramp(9000, np.float64))),
            "prod": tf.reduce_prod(tf.constant(1 + ramp(9000) * 1e-3)),
        }
    )
    assert bits(got["mean"]) == [1081053126]
    assert bits(got["f64"]) == [4674862905151402804]
    # A product is not split in halves as a sum is.
    assert bits(got["prod"]) == [1470767482]


def test_partial_reductions_follow_eigens_order():
    got = run(
        {
            # Reduced then kept: outputs 0..7 form one packet (four
            # accumulators along the 16 rows), output 8 is added in order.
            "axis0": tf.reduce_sum(tf.constant(ramp(16 * 9).reshape(16, 9)), 0),
            "axis1": tf.reduce_sum(tf.constant(ramp(7 * 40 * 9).reshape(7, 40, 9)), 1),
            "axes02": tf.reduce_sum(tf.constant(ramp(5 * 6 * 7).reshape(5, 6, 7)), [0, 2]),
            "axes13": tf.reduce_mean(tf.constant(ramp(3 * 4 * 5 * 6).reshape(3, 4, 5, 6)), [1, 3]),
        }
    )
    assert bits(got["axis0"]) == [
        1112912429, 1115440756, 1114377709, 1113314662, 1115763927,
        1114779942, 1113716897, 1115965044, 1115182178,
    ]  # fmt: skip
    assert digest(got["axis1"]) == "cf10313df9998d96"
    assert bits(got["axes02"]) == [1124156276, 1124295443, 1124434607, 1123278390, 1123556719, 1123835053]
    assert bits(got["axes13"]) == [
        1082396246, 1078678031, 1081876747, 1077892717, 1082808057,
        1081991671, 1080401889, 1081206357, 1082010824, 1080421044,
        1078927033, 1083325215, 1080535968, 1082932557, 1077356405,
    ]  # fmt: skip


def test_per_image_standardization_bit_for_bit():
    img = (np.arange(24 * 24 * 3) * 37 % 256).astype(np.uint8).reshape(24, 24, 3)
    got = run(
        {
            "one": tf.image.per_image_standardization(tf.constant(img)),
            "two": tf.image.per_image_standardization(tf.constant(np.stack([img, img[::-1]]))),
        }
    )
    assert digest(got["one"]) == "1888e00d89fb5652"
    assert digest(got["two"]) == "450035290ca881b4"


def test_division_by_a_constant_multiplies_by_its_reciprocal():
    x = np.arange(256, dtype=np.float32)
    recip = x * (np.float32(1) / np.float32(255))
    quotient = x / np.float32(255)
    assert not np.array_equal(recip, quotient)
    p = tf.placeholder(tf.float32, [None])
    c = tf.placeholder(tf.float32, [])
    u = tf.placeholder(tf.uint8, [None])
    i = tf.placeholder(tf.int32, [None])
    fetch = {
        "operator": p / 255.0,
        "divide": tf.divide(p, 255.0),
        "div": tf.div(p, 255.0),
        "realdiv": tf.realdiv(p, tf.constant(255.0)),
        "cast": tf.cast(u, tf.float32) / tf.cast(tf.constant(255), tf.float32),
        "shifted": (tf.cast(u, tf.float32) - 127.5) / 127.5,
        # A denominator known only when run is divided by.
        "fed": p / c,
        # All constant: TensorFlow folds the quotient itself.
        "constant": tf.constant(x) / 255.0,
        # Integers divide as float64, by the reciprocal too.
        "int": i / 7,
    }
    got = tf.Session().run(fetch, {p: x, c: 255.0, u: x.astype(np.uint8), i: x.astype(np.int32)})
    for k in ("operator", "divide", "div", "realdiv", "cast"):
        np.testing.assert_array_equal(got[k], recip, err_msg=k)
    shifted = (x - np.float32(127.5)) * (np.float32(1) / np.float32(127.5))
    np.testing.assert_array_equal(got["shifted"], shifted)
    np.testing.assert_array_equal(got["fed"], quotient)
    np.testing.assert_array_equal(got["constant"], quotient)
    assert got["int"].dtype == np.float64
    np.testing.assert_array_equal(got["int"], x.astype(np.float64) * (1 / 7.0))
    assert not np.array_equal(got["int"], x.astype(np.float64) / 7.0)


def test_a_constant_folded_only_below_100_kib_divides_exactly():
    # TensorFlow folds cast(constant) / 255 into one constant (the exact
    # quotient) unless the cast's float32 output would reach 100 KiB; then
    # the division is rewritten as for any other numerator.
    def divided(n):
        u = (np.arange(n) % 256).astype(np.uint8)
        got = run(tf.cast(tf.constant(u), tf.float32) / 255.0)
        f = u.astype(np.float32)
        return got, f / np.float32(255), f * (np.float32(1) / np.float32(255))

    got, quotient, recip = divided(25599)
    np.testing.assert_array_equal(got, quotient)
    got, quotient, recip = divided(25600)
    np.testing.assert_array_equal(got, recip)
    assert not np.array_equal(recip, quotient)


def test_a_constant_denominator_can_still_be_fed():
    x = tf.placeholder(tf.float32, [3])
    c = tf.constant(255.0)
    y = x / c
    assert y.name == "truediv:0"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3], c: 2.0}), [0.5, 1.0, 1.5])
        np.testing.assert_array_equal(sess.run(y, {x: [255, 0, 510]}), [1.0, 0.0, 2.0])


def test_floats_out_of_an_integers_range_cast_as_tensorflow_on_x86():
    # Truncated toward zero through the processor's conversion: NaN and
    # values out of range give the lowest integer, unsigned types take
    # the bits of a negative; narrower types saturate that 32-bit result.
    v = np.array([-1.5, 0.7, 300.0, 70000.0, 3e9, 5e9, 1e10, -1e10, 1e19, 1e20, np.inf, np.nan] * 4, np.float32)
    got = run({t: tf.cast(tf.constant(v), getattr(tf, t)) for t in ("int32", "uint32", "int64", "uint64", "uint8", "int16")})
    low = -(2**31)
    assert got["int32"][:12].tolist() == [-1, 0, 300, 70000] + [low] * 8
    assert got["uint32"][:12].tolist() == [2**32 - 1, 0, 300, 70000, 3000000000] + [2**31] * 7
    assert got["int64"][:12].tolist() == [-1, 0, 300, 70000, 3000000000, 5000000000, 10000000000, -10000000000] + [-(2**63)] * 4
    assert got["uint64"][:12].tolist() == [
        2**64 - 1, 0, 300, 70000, 3000000000, 5000000000, 10000000000, 2**64 - 10000000000,
        9999999980506447872, 2**63, 2**63, 2**63,
    ]  # fmt: skip
    assert got["uint8"][:12].tolist() == [0, 0, 255, 255] + [0] * 8
    assert got["int16"][:12].tolist() == [-1, 0, 300, 32767] + [-32768] * 8
