"""compat.v1 image decoding as TensorFlow 2.21 (``tensorflow.compat.v1``,
graph mode) behaves: decode_jpeg's attributes, every op decoding every
format, libpng's channel rules, uint16/float32 output and TensorFlow's
error classes. Every expectation below was observed there; the JPEGs are
the golden corpus of the engine's tests, the PNGs are written here."""

import hashlib
import pathlib
import struct
import zlib

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run
from feedstock import errors

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "feedstock/tests/data/golden/jpeg"


def jpeg(name):
    return (GOLDEN / name).read_bytes()


def digest(a):
    """The first 16 hex digits of the SHA-256 of the array's bytes."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def png(w, h, color_type, bit_depth, rows, extra=b""):
    """A PNG of unfiltered `rows` (bytes each), `extra` chunks before IDAT."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0)
    idat = zlib.compress(b"".join(b"\0" + r for r in rows))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


def trns(data):
    return struct.pack(">I", len(data)) + b"tRNS" + data + struct.pack(">I", zlib.crc32(b"tRNS" + data))


RGB8 = png(2, 1, 2, 8, [bytes([10, 20, 30, 200, 100, 50])])


# ------------------------------------------------------------ decode_jpeg's attributes


@pytest.mark.parametrize(("name", "kw", "shape", "want"), [
    ("04.jpg", dict(ratio=2), [16, 22, 3], "48dfb28fccd11b7a"),
    ("04.jpg", dict(ratio=4), [8, 11, 3], "7627cbcd906260f8"),
    ("04.jpg", dict(ratio=8), [4, 6, 3], "8e04f79b4322902b"),
    ("04.jpg", dict(ratio=2, channels=1), [16, 22, 1], "8da2cd7761a663bc"),
    ("04.jpg", dict(dct_method="INTEGER_ACCURATE"), [31, 44, 3], "1e7c110e6ec833db"),
    ("04.jpg", dict(fancy_upscaling=False), [31, 44, 3], "6ec5ab9f73baea77"),
    ("04.jpg", dict(dct_method="INTEGER_FAST"), [31, 44, 3], "365dbe3cc996f176"),
    ("05.jpg", dict(ratio=8), [6, 5, 3], "e166a28b7faf3000"),
    ("05.jpg", dict(dct_method="INTEGER_ACCURATE"), [42, 36, 3], "5dc85b84bd8598cc"),
    ("05.jpg", dict(fancy_upscaling=False), [42, 36, 3], "9147f549d5593da4"),
    ("11.jpg", dict(ratio=4), [12, 9, 3], "3759e0891923412a"),
    ("11.jpg", dict(dct_method="INTEGER_ACCURATE"), [47, 34, 3], "1716939b2d0c6f46"),
    ("11.jpg", dict(fancy_upscaling=False), [47, 34, 3], "2076d074dece9b42"),
])
def test_decode_jpeg_attributes_give_tensorflows_pixels(name, kw, shape, want):
    img = run(tf.io.decode_jpeg(tf.constant(jpeg(name)), **kw))
    assert list(img.shape) == shape
    assert digest(img) == want


def test_try_recover_truncated_returns_the_image():
    data = jpeg("05.jpg")
    full = run(tf.io.decode_jpeg(data))
    cut = tf.constant(data[:int(len(data) * 0.8)])
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.io.decode_jpeg(cut))
    for kw in (dict(), dict(acceptable_fraction=0.5), dict(acceptable_fraction=2.0)):
        img = run(tf.io.decode_jpeg(cut, try_recover_truncated=True, **kw))
        assert img.shape == (42, 36, 3)
        # The MCU rows decoded before the data ends are the full image's.
        np.testing.assert_array_equal(img[:15], full[:15])
    # Cut inside the headers: an error even with recovery, as in TensorFlow.
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.io.decode_jpeg(data[:int(len(data) * 0.3)], try_recover_truncated=True))


@pytest.mark.parametrize(("kw", "message"), [
    (dict(ratio=3), "ratio must be 1, 2, 4, or 8, got 3"),
    (dict(ratio=0), "ratio must be 1, 2, 4, or 8, got 0"),
    (dict(dct_method="FLOAT"), "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}"),
    (dict(dct_method="integer_accurate"), "dct_method must be one of"),
    (dict(channels=2), "`channels` must be 0, 1, 3 or 4 but got 2"),
    (dict(channels=5), "`channels` must be 0, 1, 3 or 4 but got 5"),
    (dict(channels=4), "JPEG does not support 4 channels"),
])
def test_bad_jpeg_attributes_fail_when_run(kw, message):
    t = tf.io.decode_jpeg(tf.constant(jpeg("04.jpg")), **kw)
    if "channels" in kw:
        assert t.shape.as_list() == [None, None, kw["channels"]]
    with pytest.raises(errors.InvalidArgumentError, match=message.replace("(", r"\(")) as e:
        run(t)
    assert "(key" not in str(e.value)


def test_jpeg_attributes_are_checked_even_for_png_data_and_ignored_otherwise():
    with pytest.raises(errors.InvalidArgumentError, match="ratio must be"):
        run(tf.io.decode_jpeg(RGB8, ratio=3))
    img = run(tf.io.decode_jpeg(RGB8, ratio=2, channels=4))
    np.testing.assert_array_equal(img.reshape(-1), [10, 20, 30, 255, 200, 100, 50, 255])


@pytest.mark.parametrize("op", ["decode_jpeg", "decode_png", "decode_image"])
def test_channels_minus_one_is_a_value_error_when_built(op):
    with pytest.raises(ValueError, match="channels must be non-negative, got -1"):
        getattr(tf.io, op)(tf.constant(RGB8), channels=-1)


@pytest.mark.parametrize("op", ["decode_png", "decode_image"])
@pytest.mark.parametrize("channels", [2, 5])
def test_bad_channels_fail_when_run(op, channels):
    t = getattr(tf.io, op)(tf.constant(RGB8), channels=channels)
    with pytest.raises(errors.InvalidArgumentError, match=f"must be 0, 1, 3 or 4 but got {channels}"):
        run(t)


# ------------------------------------------------------------ every op decodes every format


def test_each_op_decodes_jpeg_and_png():
    data = jpeg("04.jpg")
    want = run(tf.io.decode_jpeg(data))
    assert digest(want) == "365dbe3cc996f176"
    np.testing.assert_array_equal(run(tf.io.decode_png(data)), want)
    np.testing.assert_array_equal(run(tf.io.decode_image(data)), want)
    png_img = run(tf.io.decode_jpeg(RGB8))
    np.testing.assert_array_equal(png_img.reshape(-1), [10, 20, 30, 200, 100, 50])


def test_decode_png_of_a_jpeg_with_4_channels_is_tensorflows_error():
    with pytest.raises(errors.InvalidArgumentError, match="JPEG does not support 4 channels"):
        run(tf.io.decode_png(jpeg("04.jpg"), channels=4))


@pytest.mark.parametrize("op,name", [("decode_jpeg", "DecodeJpeg"), ("decode_png", "DecodePng")])
def test_bmp_is_refused_by_jpeg_and_png_ops(op, name):
    bmp = b"BM" + bytes(60)
    with pytest.raises(errors.InvalidArgumentError,
                       match=f"Trying to decode BMP format using a wrong op.*Op used: {name}"):
        run(getattr(tf.io, op)(bmp))


@pytest.mark.parametrize("op", ["decode_jpeg", "decode_png", "decode_image"])
def test_unknown_and_empty_data(op):
    with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format") as e:
        run(getattr(tf.io, op)(b"hello world"))
    assert "(key" not in str(e.value)
    assert "PNG signature" not in str(e.value)
    with pytest.raises(errors.InvalidArgumentError, match="Input is empty."):
        run(getattr(tf.io, op)(b""))


def test_truncated_png_through_decode_jpeg_is_a_png_error():
    with pytest.raises(errors.InvalidArgumentError, match="PNG"):
        run(tf.io.decode_jpeg(RGB8[:len(RGB8) // 2]))


# ------------------------------------------------------------ PNG channel rules


def test_trns_adds_no_alpha_to_gray_or_rgb_with_channels_0():
    g8t = png(3, 1, 0, 8, [bytes([0, 7, 200])], trns(b"\0\x07"))
    img = run(tf.io.decode_png(g8t))
    assert img.shape == (1, 3, 1)
    np.testing.assert_array_equal(img.reshape(-1), [0, 7, 200])
    rgba = run(tf.io.decode_png(g8t, channels=4))
    np.testing.assert_array_equal(rgba.reshape(-1), [0, 0, 0, 255, 7, 7, 7, 0, 200, 200, 200, 255])
    rgbt = png(2, 1, 2, 8, [bytes([1, 2, 3, 4, 5, 6])], trns(b"\0\x01\0\x02\0\x03"))
    assert run(tf.io.decode_png(rgbt)).shape == (1, 2, 3)


def test_alpha_added_to_low_bit_gray_is_the_bit_depths_maximum():
    g1 = png(3, 1, 0, 1, [bytes([0b10100000])])
    np.testing.assert_array_equal(run(tf.io.decode_png(g1, channels=4)).reshape(-1),
                                  [255, 255, 255, 1, 0, 0, 0, 1, 255, 255, 255, 1])
    np.testing.assert_array_equal(run(tf.io.decode_png(g1, channels=4, dtype=tf.uint16)).reshape(-1),
                                  [65535, 65535, 65535, 257, 0, 0, 0, 257, 65535, 65535, 65535, 257])
    np.testing.assert_array_equal(run(tf.io.decode_image(g1, channels=3)).reshape(-1),
                                  [255, 255, 255, 0, 0, 0, 255, 255, 255])


def test_16_bit_colour_to_gray_rounds_at_16_bits():
    rgb16 = png(2, 1, 2, 16, [struct.pack(">6H", 1000, 50000, 65535, 12345, 54321, 257)])
    np.testing.assert_array_equal(run(tf.io.decode_png(rgb16, channels=1)).reshape(-1), [145, 139])
    np.testing.assert_array_equal(run(tf.io.decode_png(rgb16, channels=1, dtype=tf.uint16)).reshape(-1),
                                  [37122, 35605])


# ------------------------------------------------------------ dtypes


def test_uint16_and_float32_output():
    t = tf.io.decode_png(RGB8, dtype=tf.uint16)
    assert t.dtype == tf.uint16
    np.testing.assert_array_equal(run(t).reshape(-1), [2570, 5140, 7710, 51400, 25700, 12850])
    f = run(tf.io.decode_image(RGB8, dtype=tf.float32))
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f.reshape(-1), np.float32([
        0.03921568766236305, 0.0784313753247261, 0.11764705926179886,
        0.7843137383460999, 0.3921568691730499, 0.19607843458652496]))
    i = tf.io.decode_image(RGB8, dtype=tf.int32)
    assert i.dtype == tf.int32
    np.testing.assert_array_equal(run(i).reshape(-1),
                                  [84213760, 168427520, 252641280, 1684275200, 842137600, 421068800])


def test_jpeg_data_widens_by_256_and_scales_by_1_over_255():
    data = jpeg("04.jpg")
    u8 = run(tf.io.decode_jpeg(data))
    u16 = run(tf.io.decode_png(data, dtype=tf.uint16))
    assert digest(u16) == "b2105ac9133660b0"
    np.testing.assert_array_equal(u16, u8.astype(np.uint16) * 256)
    f = run(tf.io.decode_image(data, dtype=tf.float32))
    assert digest(f) == "c72d4b4106ac9a74"


def test_refused_dtypes_are_type_errors_when_built():
    with pytest.raises(TypeError, match="not in list of allowed values: uint8, uint16"):
        tf.io.decode_png(RGB8, dtype=tf.float32)
    with pytest.raises(TypeError, match="not in list of allowed values: uint8, uint16"):
        tf.io.decode_png(RGB8, dtype=tf.int32)


# ------------------------------------------------------------ inputs and static shapes


def test_contents_must_be_a_string_scalar_when_built():
    with pytest.raises(ValueError, match="rank"):
        tf.io.decode_jpeg(tf.constant([RGB8, RGB8]))
    with pytest.raises(TypeError, match="string"):
        tf.io.decode_jpeg(tf.constant(3))


def test_decode_image_static_shapes():
    assert tf.io.decode_image(RGB8).shape.ndims is None
    assert tf.io.decode_image(RGB8, channels=3).shape.ndims is None
    assert tf.io.decode_image(RGB8, channels=3, expand_animations=False).shape.as_list() == [None, None, 3]
    assert tf.io.decode_image(RGB8, expand_animations=False).shape.as_list() == [None, None, None]
    assert tf.io.decode_png(RGB8, channels=5).shape.as_list() == [None, None, 5]
    img = tf.io.decode_image(RGB8)
    img.set_shape([1, 2, 3])
    assert run(img).shape == (1, 2, 3)


def test_decode_and_resize_name_their_tensors_as_tensorflow():
    # Printed tensors are what a program shows its user; these names and
    # shapes were observed under TensorFlow 2.21 (frankkuo20/openCVExample's
    # tensorflow/train.py prints its decode_jpeg output).
    g = tf.Graph()
    with g.as_default():
        c = tf.placeholder(tf.string, [])
        got = [tf.image.decode_jpeg(c, 3), tf.image.decode_jpeg(c, 3, name="x"), tf.image.decode_png(c),
               tf.image.decode_image(c), tf.image.decode_image(c, name="y"), tf.io.decode_jpeg(c)]
        assert [t.name for t in got] == ["DecodeJpeg:0", "x:0", "DecodePng:0", "decode_image/DecodeImage:0",
                                         "y/DecodeImage:0", "DecodeJpeg_1:0"]
        assert str(got[0]) == 'Tensor("DecodeJpeg:0", shape=(?, ?, 3), dtype=uint8)'
        i = tf.placeholder(tf.float32, [None, None, 3])
        one = [tf.image.resize_images(i, [5, 5], method=m) for m in range(3)]
        one.append(tf.image.resize_images(i, [5, 5], name="r"))
        assert [t.name for t in one] == ["resize/Squeeze:0", "resize_1/Squeeze:0", "resize_2/Squeeze:0",
                                         "r/Squeeze:0"]
        assert str(one[0]) == 'Tensor("resize/Squeeze:0", shape=(5, 5, 3), dtype=float32)'
        assert g.get_tensor_by_name("resize_2/ResizeBicubic:0").shape.as_list() == [1, 5, 5, 3]
        b = tf.placeholder(tf.float32, [2, None, None, 3])
        many = [tf.image.resize_images(b, [5, 5]), tf.image.resize_images(b, [5, 5], method=3),
                tf.image.resize_bilinear(b, [4, 4]), tf.image.resize_nearest_neighbor(b, [4, 4], name="nn"),
                tf.image.resize_bicubic(b, [4, 4], name="bc")]
        assert [t.name for t in many] == ["resize_3/ResizeBilinear:0", "resize_4/ResizeArea:0", "ResizeBilinear:0",
                                          "nn:0", "bc:0"]
    # A size that does not change still goes through the scope (TF 2.21).
    with tf.Graph().as_default():
        i = tf.placeholder(tf.float32, [5, 5, 3])
        b = tf.placeholder(tf.float32, [2, 5, 5, 3])
        u = tf.placeholder(tf.uint8, [5, 5, 3])
        same = [tf.image.resize_images(i, [5, 5]), tf.image.resize_images(b, [5, 5]),
                tf.image.resize_images(u, [5, 5]), tf.image.resize_images(u, [4, 4], method=1)]
        assert [str(t) for t in same] == [
            'Tensor("resize/Squeeze:0", shape=(5, 5, 3), dtype=float32)',
            'Tensor("Placeholder_1:0", shape=(2, 5, 5, 3), dtype=float32)',
            'Tensor("resize_2/Squeeze:0", shape=(5, 5, 3), dtype=uint8)',
            'Tensor("resize_3/Squeeze:0", shape=(4, 4, 3), dtype=uint8)',
        ]
