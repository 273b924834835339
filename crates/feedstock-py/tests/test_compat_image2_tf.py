"""compat.v1 GIF and BMP decoding, and the crop / flip / standardization
checks, as TensorFlow 2.21 (``tensorflow.compat.v1``, graph mode) behaves.
Every expectation below was observed there; the GIFs and BMPs are written
here."""

import re
import struct

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run
from feedstock import errors


# ---------------------------------------------------------------------- GIF


def _lzw(indices, min_size=2):
    """LZW data of literal codes only, each after a clear code, so that the
    code width never grows."""
    clear, width = 1 << min_size, min_size + 1
    codes = [c for p in indices for c in (clear, p)] + [clear + 1]
    bits = nbits = 0
    out = bytearray()
    for c in codes:
        bits |= c << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 255)
            bits >>= 8
            nbits -= 8
    if nbits:
        out.append(bits)
    return bytes([min_size, len(out)]) + bytes(out) + b"\0"


def gif(width, height, palette, frames):
    """A GIF89a with a global colour table of `palette` (a power of two of
    RGB triples) and `frames` of `(left, top, w, h, transparent, indices)`,
    each with disposal 2 ("restore to background"), which TensorFlow
    ignores."""
    bits = len(palette).bit_length() - 2
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80 | bits, 0, 0))
    out += bytes(v for c in palette for v in c)
    for left, top, w, h, transparent, indices in frames:
        flags = 0x08 | (transparent is not None)
        out += bytes([0x21, 0xF9, 4, flags, 0, 0, transparent or 0, 0])
        out += b"\x2c" + struct.pack("<HHHHB", left, top, w, h, 0) + _lzw(indices)
    return bytes(out + b";")


A, B, C, D = (10, 20, 30), (200, 100, 0), (0, 0, 255), (7, 7, 7)
K = (0, 0, 0)
PAL = [A, B, C, D]
# A full first frame, a 2x2 frame at (1, 1) whose index 2 is transparent,
# and a 3x2 frame at (2, 0) that overhangs the 4-wide canvas.
ANIM = gif(4, 3, PAL, [
    (0, 0, 4, 3, None, [0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 1, 1]),
    (1, 1, 2, 2, 2, [2, 0, 3, 2]),
    (2, 0, 3, 2, None, [3, 3, 3, 0, 0, 0]),
])
ANIM_FRAMES = [
    [[A, B, C, D], [D, C, B, A], [B, B, B, B]],
    [[A, B, C, D], [D, C, A, A], [B, D, B, B]],
    [[A, B, D, D], [D, C, A, A], [B, D, B, B]],
]
# The canvas is the largest frame (3x2), not the 9x9 screen; the first
# frame starts black, and its transparent pixel stays black.
FIRST_PARTIAL = gif(9, 9, PAL, [(1, 0, 2, 2, 1, [0, 1, 2, 3]), (0, 0, 3, 1, None, [3, 2, 1])])
FIRST_PARTIAL_FRAMES = [[[K, A, K], [K, C, D]], [[D, C, B], [K, C, D]]]
SINGLE = gif(2, 1, PAL, [(0, 0, 2, 1, None, [1, 2])])


def test_decode_image_composes_gif_frames_as_tensorflow():
    # No disposal, transparency keeps the previous frame, frames clipped.
    out = run(tf.io.decode_image(ANIM))
    assert out.dtype == np.uint8 and out.shape == (3, 3, 4, 3)
    np.testing.assert_array_equal(out, ANIM_FRAMES)
    np.testing.assert_array_equal(run(tf.io.decode_image(FIRST_PARTIAL)), FIRST_PARTIAL_FRAMES)


def test_decode_image_of_gif_without_expand_animations_is_the_first_frame():
    out = run(tf.io.decode_image(ANIM, expand_animations=False, dtype=tf.uint16))
    assert out.dtype == np.uint16 and out.shape == (3, 4, 3)
    np.testing.assert_array_equal(out, np.array(ANIM_FRAMES[0]) * 256)
    f = run(tf.io.decode_image(SINGLE, dtype=tf.float32))
    np.testing.assert_array_equal(f, np.array([[[B, C]]], np.float32) * np.float32(1 / 255))


@pytest.mark.parametrize("op", ["decode_jpeg", "decode_png"])
def test_jpeg_and_png_ops_decode_a_single_frame_gif_only(op):
    out = run(getattr(tf.io, op)(SINGLE, channels=3))
    assert out.shape == (1, 2, 3)
    np.testing.assert_array_equal(out, [[B, C]])
    with pytest.raises(errors.InvalidArgumentError,
                       match="Got 3 frames, but animated gifs can only be decoded by "
                             "tf.io.decode_gif or tf.io.decode_image"):
        run(getattr(tf.io, op)(ANIM))


@pytest.mark.parametrize("channels", [1, 4])
def test_gif_takes_0_or_3_channels_when_run(channels):
    x = tf.io.decode_image(SINGLE, channels=channels)
    with pytest.raises(errors.InvalidArgumentError,
                       match=f"channels must be 0 or 3 for GIF, got {channels}"):
        run(x)


def test_gif_cut_short_keeps_its_complete_frames():
    # TensorFlow: the frames read up to their data's terminator.
    assert run(tf.io.decode_image(ANIM[:-1])).shape == (3, 3, 4, 3)
    assert run(tf.io.decode_image(ANIM[:-2])).shape == (2, 3, 4, 3)
    first_end = ANIM.index(b"\x21\xf9", 30)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid GIF data"):
        run(tf.io.decode_image(ANIM[:first_end - 1]))


def test_gif_index_outside_the_colour_table_is_an_error():
    bad = gif(2, 1, PAL[:2], [(0, 0, 2, 1, None, [0, 3])])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Invalid GIF data \(size 43\), found color index 3 outside of "
                             r"color map range 2"):
        run(tf.io.decode_image(bad))


# ---------------------------------------------------------------------- BMP


def bmp(width, height, bpp, pixel_bytes, palette=b""):
    """A BMP: the 54-byte header (pixel data after `palette`), `height`
    negative for top-down rows."""
    offset = 54 + len(palette)
    header = (b"BM" + struct.pack("<IHHI", offset + len(pixel_bytes), 0, 0, offset)
              + struct.pack("<IiiHHIIiiII", 40, width, height, 1, bpp, 0, len(pixel_bytes),
                            0, 0, 0, 0))
    return header + palette + pixel_bytes


# 2x2, 24-bit BGR, rows padded to 8 bytes, the bottom row first.
BMP24 = bmp(2, 2, 24, bytes([1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0]))
BMP24_RGB = [[[9, 8, 7], [12, 11, 10]], [[3, 2, 1], [6, 5, 4]]]


def test_bmp_24_bit_is_bottom_up_bgr():
    out = run(tf.io.decode_image(BMP24))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, BMP24_RGB)
    rgba = run(tf.io.decode_image(BMP24, channels=4))
    np.testing.assert_array_equal(rgba[..., :3], BMP24_RGB)
    assert (rgba[..., 3] == 255).all()
    np.testing.assert_array_equal(run(tf.io.decode_image(BMP24, dtype=tf.uint16)),
                                  np.array(BMP24_RGB) * 256)


def test_bmp_top_down_and_32_bit():
    top_down = bmp(1, -2, 32, bytes([1, 2, 3, 4, 5, 6, 7, 8]))
    np.testing.assert_array_equal(run(tf.io.decode_image(top_down)), [[[3, 2, 1, 4]], [[7, 6, 5, 8]]])
    np.testing.assert_array_equal(run(tf.io.decode_image(top_down, channels=3)),
                                  [[[3, 2, 1]], [[7, 6, 5]]])


def test_bmp_8_bit_keeps_the_palette_indices():
    palette = bytes([0, 0, 255, 0]) * 256
    p8 = bmp(3, 1, 8, bytes([0, 5, 9, 0]), palette)
    out = run(tf.io.decode_image(p8))
    assert out.shape == (1, 3, 1)
    np.testing.assert_array_equal(out[..., 0], [[0, 5, 9]])
    np.testing.assert_array_equal(run(tf.io.decode_image(p8, channels=3))[0, 1], [5, 5, 5])


@pytest.mark.parametrize("data,message", [
    (BMP24 + b"\0", r"Input size should match \(header_size \+ row_size \* abs_height\) but "
                    r"they differ by 1"),
    (BMP24[:-3], "they differ by -3"),
    (bmp(8, 1, 1, bytes(4)), "Number of channels inherent in the image must be 1, 3 or 4, was 0"),
    (bmp(1, 0, 24, b""), "Height must be nonzero"),
])
def test_bad_bmps_fail_when_run(data, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run(tf.io.decode_image(data))


def test_bmp_refuses_1_channel_before_the_op_check():
    with pytest.raises(errors.InvalidArgumentError, match="`channels` must be 0, 3 or 4 for BMP, but got 1"):
        run(tf.io.decode_image(BMP24, channels=1))
    with pytest.raises(errors.InvalidArgumentError, match="`channels` must be 0, 3 or 4 for BMP"):
        run(tf.io.decode_png(BMP24, channels=1))


# ------------------------------------------------------- crops, flips, standardization

IMG = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)


def test_random_crop_too_large_fails_when_run_with_tensorflows_message():
    crop = tf.random_crop(IMG, [6, 8, 4])
    assert crop.shape.as_list() == [6, 8, 4]
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"assertion failed: \[Need value.shape >= size, got \] \[5 7 3\] \[6 8 4\]"):
        run(crop)


def test_random_crop_of_the_wrong_rank_is_a_value_error_when_built():
    with pytest.raises(ValueError):
        tf.random_crop(IMG, [2, 2])


@pytest.mark.parametrize("op", ["flip_left_right", "flip_up_down", "per_image_standardization",
                                "random_flip_left_right"])
def test_empty_images_are_refused(op):
    empty = np.zeros((3, 0, 3), np.uint8)
    with pytest.raises(ValueError, match="must be > 0"):
        getattr(tf.image, op)(empty)
    p = tf.placeholder(tf.uint8, [None, None, None])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"assertion failed: \[inner 3 dims of .{0,2}image.shape.{0,2} must be > 0.\]"):
        run(getattr(tf.image, op)(p), {p: empty})


def test_crop_box_given_as_tensors_is_checked_when_run():
    img = tf.constant(np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3))
    crop = tf.image.crop_to_bounding_box(img, tf.constant(1), 2, 3, tf.constant(4))
    # A constant target gives the static size, as in TensorFlow.
    assert crop.shape.as_list() == [3, 4, 3]
    computed = tf.image.crop_to_bounding_box(img, tf.constant(0) + 1, 2, 3, 4)
    with tf.Session() as s:
        got = s.run(crop)
        assert got.shape == (3, 4, 3) and got[0, 0].tolist() == [27, 28, 29]
        assert s.run(computed).tolist() == got.tolist()
        # TensorFlow 2.21's assertion messages, each when run.
        for box, why in [
            ((tf.constant(3), 0, 3, 4), "height must be >= target + offset."),
            ((0, tf.constant(5), 2, 3), "width must be >= target + offset."),
            ((tf.constant(-1), 0, 2, 2), "offset_height must be >= 0."),
        ]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(f"assertion failed: [{why}]")):
                s.run(tf.image.crop_to_bounding_box(img, *box))
    # What Python ints decide is still refused when built.
    with pytest.raises(ValueError, match="target_height must be > 0"):
        tf.image.crop_to_bounding_box(img, tf.constant(0), 0, 0, 2)
    images = tf.constant(np.zeros((2, 5, 7, 1), np.float32))
    batch = tf.image.crop_to_bounding_box(images, tf.constant(1), 1, 2, 2)
    assert batch.shape.as_list() == [2, 2, 2, 1]
