"""compat.v1 image adjustments (brightness, contrast, dtype conversion,
grayscale, padding and cropping, random brightness / contrast / up-down
flips) and the accepted no-op summaries, as TensorFlow 2.21
(``tensorflow.compat.v1``, graph mode) behaves. Every expectation
below was observed there; float results are compared bit for bit (as
their uint32 views)."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run
from feedstock import errors


U8 = (np.arange(2 * 3 * 3) * 29 % 256).astype(np.uint8).reshape(2, 3, 3)
F32 = ((np.arange(2 * 3 * 3) * 7 % 11) / 7.0 - 0.3).astype(np.float32).reshape(2, 3, 3)

# TensorFlow's outputs for U8 and F32 (floats as their uint32 bits).
bright_u8 = [[[51, 80, 109], [138, 167, 196], [225, 254, 255]], [[56, 85, 114], [143, 172, 201], [230, 255, 255]]]
bright_f32 = [[[3192704206, 1061997773, 1047137954], [1067270612, 1059601028, 1034914553], [1066072239, 1057204283, 3177844386]], [[1064394518, 1052650467, 3192704206], [1061997773, 1047137954, 1067270612], [1059601028, 1034914553, 1066072239]]]
contrast_u8 = [[[0, 0, 0], [85, 114, 143], [242, 255, 255]], [[0, 0, 0], [94, 123, 152], [251, 255, 255]]]
contrast_f32 = [[[1072823071, 3187191676, 1057164337], [1023969424, 1032038472, 1060280106], [1046498824, 1048576003, 1063395874]], [[1053768948, 1054807540, 1065932429], [1058482547, 1059001842, 3209281688], [1061598315, 1062117612, 3206165922]]]
conv_f32_u8s = [[[0, 178, 32], [255, 142, 0], [251, 105, 0]], [[215, 69, 0], [178, 32, 255], [142, 0, 251]]]
conv_f32_i32s = [-2147483648, 1073741824, 2147483520, 2147483520]
conv_u8_f32 = [[[0, 1038674154, 1047062762], [1051635375, 1055451370, 1058115986], [1060023983, 1061931981, 1063839978]], [[1017159841, 1040746633, 1048378622], [1052293305, 1056109300, 1058444951], [1060352948, 1062260946, 1064168943]]]
gray_u8 = [[[23], [110], [198]], [[28], [115], [203]]]
gray_f32 = [[[1051457894], [1059695003], [1057298498]], [[1052839378], [1054057404], [1049264393]]]
cop = [[[0, 29, 58], [87, 116, 145]], [[5, 34, 63], [92, 121, 150]], [[0, 0, 0], [0, 0, 0]]]
pad = [[[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 29, 58], [87, 116, 145], [174, 203, 232], [0, 0, 0]], [[5, 34, 63], [92, 121, 150], [179, 208, 237], [0, 0, 0]]]
cc = [[[9.0], [10.0], [11.0]], [[16.0], [17.0], [18.0]], [[23.0], [24.0], [25.0]]]


def bits(x):
    return np.asarray(x, np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize("name, build, want, dtype", [
    ("brightness u8", lambda: tf.image.adjust_brightness(U8, 0.2), bright_u8, "uint8"),
    ("contrast u8", lambda: tf.image.adjust_contrast(U8, 1.8), contrast_u8, "uint8"),
    ("convert saturating", lambda: tf.image.convert_image_dtype(F32, tf.uint8, saturate=True),
     conv_f32_u8s, "uint8"),
    ("convert to int32", lambda: tf.image.convert_image_dtype(
        np.array([-2, 0.5, 1.0, 1.5], np.float32), tf.int32, saturate=True), conv_f32_i32s, "int32"),
    ("grayscale u8", lambda: tf.image.rgb_to_grayscale(U8), gray_u8, "uint8"),
    ("crop or pad", lambda: tf.image.resize_image_with_crop_or_pad(U8, 3, 2), cop, "uint8"),
    ("pad", lambda: tf.image.pad_to_bounding_box(U8, 1, 0, 3, 4), pad, "uint8"),
    ("central crop", lambda: tf.image.central_crop(
        np.arange(5 * 7).reshape(5, 7, 1).astype(np.float32), 0.4), cc, "float32"),
])
def test_values_as_tensorflow(name, build, want, dtype):
    t = build()
    assert t.dtype == getattr(tf, dtype)
    out = run(t)
    assert out.dtype == np.dtype(dtype)
    assert t.shape.as_list() == list(out.shape)
    assert out.tolist() == want


@pytest.mark.parametrize("build, want", [
    (lambda: tf.image.adjust_brightness(F32, 0.1), bright_f32),
    (lambda: tf.image.adjust_contrast(F32, -1.3), contrast_f32),
    (lambda: tf.image.convert_image_dtype(U8, tf.float32), conv_u8_f32),
    (lambda: tf.image.rgb_to_grayscale(F32), gray_f32),
])
def test_float_bits_as_tensorflow(build, want):
    assert bits(run(build())) == want


def test_contrast_mean_is_tensorflows_folded_sum():
    # TensorFlow sums the plane by folding it in halves; a running sum
    # differs in the last bit for this image (observed).
    x = np.random.RandomState(0).rand(5, 7, 3).astype(np.float32) * 3 - 1
    out = run(tf.image.adjust_contrast(x, 1.7))
    n = 35
    p = x.reshape(n, 3).copy()
    r = n
    while r > 1:
        left = (r + 1) // 2
        p[:r - left] = p[:r - left] + p[left:r]
        r = left
    mean = p[0] * np.float32(1.0 / n)
    assert bits(out) == bits((x - mean) * np.float32(1.7) + mean)


def test_float64_and_int_images_keep_their_dtype():
    f64 = np.linspace(0, 1, 24).reshape(2, 4, 3)
    assert run(tf.image.adjust_brightness(f64, 0.1)).dtype == np.float64
    # TensorFlow adds in float32 and casts back.
    assert run(tf.image.adjust_brightness(f64, 0.1)).tolist() == (
        (f64.astype(np.float32) + np.float32(0.1)).astype(np.float64).tolist())
    i16 = np.array([[[-300, 0, 32000]]], np.int16)
    assert run(tf.image.adjust_contrast(i16, 2.0)).dtype == np.int16
    assert run(tf.image.rgb_to_grayscale(f64[..., :3])).dtype == np.float64


def test_convert_image_dtype_between_integers_and_checks():
    assert run(tf.image.convert_image_dtype(np.array([-128, -1, 0, 1, 127], np.int8), tf.uint8)).tolist() == [
        0, 254, 0, 2, 254]
    assert run(tf.image.convert_image_dtype(np.array([-32768, -1, 0, 1, 32767], np.int16), tf.int8,
                                            saturate=True)).tolist() == [-128, -1, 0, 0, 127]
    assert run(tf.image.convert_image_dtype(np.array([0, 1, 255], np.uint8), tf.int32)).tolist() == [
        0, 8388608, 2139095040]
    with pytest.raises(AttributeError, match="^dtype must be either floating point or integer"):
        tf.image.convert_image_dtype(U8, tf.string)
    with pytest.raises(AttributeError, match="^image dtype must be either floating point or integer"):
        tf.image.convert_image_dtype(np.array([True]), tf.float32)


def test_build_time_checks():
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tf.image.random_brightness(U8, -0.1)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(U8, 0.5, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_contrast(U8, -0.5, 0.5)
    with pytest.raises(ValueError, match="at least rank 3"):
        tf.image.adjust_contrast(U8[0], 2.0)
    with pytest.raises(ValueError, match="^width must be <= target - offset"):
        tf.image.pad_to_bounding_box(U8, 0, 3, 2, 5)
    with pytest.raises(ValueError, match="^height must be <= target - offset"):
        tf.image.pad_to_bounding_box(U8, 1, 0, 2, 5)
    with pytest.raises(ValueError, match="^offset_height must be >= 0"):
        tf.image.pad_to_bounding_box(U8, -1, 0, 2, 5)
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.pad_to_bounding_box(U8[0], 0, 0, 2, 5)
    with pytest.raises(ValueError, match="^target_height must be > 0"):
        tf.image.resize_image_with_crop_or_pad(U8, 0, 3)
    with pytest.raises(ValueError, match="central_fraction must be within"):
        tf.image.central_crop(U8, 0.0)
    with pytest.raises(ValueError, match="central_fraction must be within"):
        tf.image.central_crop(U8, 1.5)
    with pytest.raises(ValueError, match="must be at least three-dimensional"):
        tf.image.central_crop(U8[0], 0.5)
    with pytest.raises(ValueError, match="Had rank = 5"):
        tf.image.central_crop(np.zeros((1, 2, 3, 4, 5)), 0.5)
    with pytest.raises(ValueError, match="Last dimension of a grayscale image should be size 1"):
        tf.image.grayscale_to_rgb(tf.constant(U8))
    # TensorFlow reads the shape of a numpy value before converting it.
    with pytest.raises(AttributeError, match="has no attribute 'get_shape'"):
        tf.image.grayscale_to_rgb(U8[..., :1])


def test_unknown_sizes_are_checked_when_run():
    p = tf.placeholder_with_default(U8, [None, None, 3])
    padded = tf.image.pad_to_bounding_box(p, 1, 2, 2, 7)
    assert padded.shape.as_list() == [2, 7, 3]
    with pytest.raises(errors.InvalidArgumentError, match="height must be <= target - offset"):
        run(padded)
    cop = tf.image.resize_image_with_crop_or_pad(p, 4, 9)
    assert cop.shape.as_list() == [4, 9, 3]
    out = run(cop)
    assert out.shape == (4, 9, 3) and out[1:3, 3:6].tolist() == U8.tolist() and out.sum() == U8.sum()
    # Of unknown rank: taken as one image, as TensorFlow does.
    q = tf.placeholder(tf.uint8)
    assert tf.image.pad_to_bounding_box(q, 0, 0, 5, 6).shape.as_list() == [5, 6, None]


def test_batches_are_adjusted_per_image():
    b = np.stack([U8, 255 - U8])
    out = run(tf.image.adjust_contrast(b, 1.8))
    assert out[0].tolist() == contrast_u8
    assert run(tf.image.resize_image_with_crop_or_pad(b, 3, 2)).shape == (2, 3, 2, 3)
    assert run(tf.image.grayscale_to_rgb(tf.constant(b[..., :1]))).shape == (2, 2, 3, 3)
    assert run(tf.image.central_crop(b, 0.5)).shape == (2, 2, 3, 3)


def test_random_brightness_and_contrast_draw_each_run_within_range():
    x = np.full((4, 4, 3), 0.5, np.float32)
    t = tf.image.random_brightness(x, 0.3)
    assert t.dtype == tf.float32 and t.shape.as_list() == [4, 4, 3]
    with tf.Session() as s:
        deltas = {float(s.run(t)[0, 0, 0]) - 0.5 for _ in range(20)}
    assert len(deltas) > 10 and all(-0.3 - 1e-6 <= d < 0.3 + 1e-6 for d in deltas)
    x = np.array([[[0.0], [1.0]]], np.float32)  # mean 0.5
    t = tf.image.random_contrast(x, 0.2, 0.6)
    with tf.Session() as s:
        factors = {round(float(1.0 - 2 * s.run(t)[0, 0, 0]), 5) for _ in range(20)}
    assert len(factors) > 10 and all(0.2 - 1e-5 <= f <= 0.6 + 1e-5 for f in factors)
    # A zero range is no change, as in TensorFlow.
    assert run(tf.image.random_brightness(U8, 0.0)).tolist() == U8.tolist()


def test_seeded_random_ops_repeat_across_sessions():
    def draws(build):
        with tf.Graph().as_default():
            t = build()
            with tf.Session() as s:
                return [s.run(t).tolist() for _ in range(5)]
    for build in (lambda: tf.image.random_brightness(F32, 0.5, seed=3),
                  lambda: tf.image.random_contrast(F32, 0.1, 2.0, seed=3),
                  lambda: tf.image.random_flip_up_down(np.arange(24).reshape(4, 2, 3), seed=7)):
        assert draws(build) == draws(build)


def test_random_flip_up_down():
    img = np.arange(3 * 2 * 1).reshape(3, 2, 1)
    t = tf.image.random_flip_up_down(img)
    assert t.shape.as_list() == [3, 2, 1]
    with tf.Session() as s:
        seen = {str(s.run(t).tolist()) for _ in range(40)}
    assert seen == {str(img.tolist()), str(img[::-1].tolist())}
    with pytest.raises(ValueError):
        tf.image.random_flip_up_down(np.zeros((2, 2, 3, 3, 3)))


def test_summaries_are_accepted_and_merge_all_still_works():
    img = tf.constant(np.zeros((2, 3, 3, 3), np.uint8))
    s1 = tf.summary.image("images", img)
    s2 = tf.summary.scalar("loss", tf.constant(1.0))
    s3 = tf.summary.histogram("h", tf.constant([1.0, 2.0]))
    for t in (s1, s2, s3):
        assert t.dtype == tf.string and t.shape.as_list() == []
    assert tf.get_collection(tf.GraphKeys.SUMMARIES)[-3:] == [s1, s2, s3]
    with tf.Session() as s:
        assert s.run(tf.summary.merge_all()) == {}


# ------------------------------------------------------------------ resize

R = (np.arange(1 * 3 * 4 * 2) * 37 % 256).astype(np.uint8).reshape(1, 3, 4, 2)
RF = ((np.arange(1 * 3 * 4 * 2) * 13 % 17) / 3.0 - 2).astype(np.float32).reshape(1, 3, 4, 2)

# TensorFlow's outputs for R and RF (floats as their uint32 bits).
BIL_U8 = [[[[0, 1108606976], [1120228694, 1124575915], [1128617302, 1115597478]], [[1103101952, 1114898432], [1123374422, 1126148779], [1122885085, 1118786899]], [[1111490560, 1118437376], [1125296811, 1126603162], [1117082963, 1119695665]], [[1116733440, 1121583104], [1126869675, 1124820582], [1120228692, 1116130508]], [[1117782016, 1122631680], [1127393963, 1124226389], [1121277267, 1114199383]]]]
BIL_F32_AC = [[[[3221225472, 1075139925], [3204448256, 1065353216], [1065353216, 3198855851], [3198855848, 1066751317], [3218429269, 1076538027], [3190467240, 1068149419], [1068149419, 0]], [[3217497202, 1077004060], [3177418304, 1069081486], [1069081486, 1038323260], [1038323264, 1070479588], [3214700999, 1078402162], [1049508068, 1071877689], [1071877689, 1055100474]], [[3213768932, 1068149417], [1053236338, 1064421147], [1072809756, 1057896676], [1057896676, 1066285284], [3209108594, 1070945619], [1060692878, 1067683384], [1074673892, 1063489082]], [[3207244459, 3221225472], [1062557013, 3204448256], [1075139925, 1065353216], [1065353216, 3198855848], [3198855851, 3218429269], [1066751317, 3190467240], [1076538027, 1068149419]]]]
BIL_F32_HP = [[[[3219827371, 1075838976], [1049135245, 1059201568], [3190467238, 1068149418], [3206125980, 1073881634], [1069547520, 1042983595]], [[3210040662, 3208642560], [1067590179, 1052211066], [1062557014, 1045779808], [1053609159, 1030680256], [1075838976, 1066751318]]]]
NN_U8 = [[[[0, 37], [0, 37], [74, 111], [74, 111], [148, 185], [148, 185], [222, 3]], [[0, 37], [0, 37], [74, 111], [74, 111], [148, 185], [148, 185], [222, 3]], [[40, 77], [40, 77], [114, 151], [114, 151], [188, 225], [188, 225], [6, 43]], [[40, 77], [40, 77], [114, 151], [114, 151], [188, 225], [188, 225], [6, 43]], [[80, 117], [80, 117], [154, 191], [154, 191], [228, 9], [228, 9], [46, 83]]]]
NN_U8_AC = [[[[0, 37], [74, 111], [74, 111], [148, 185], [148, 185], [222, 3], [222, 3]], [[40, 77], [114, 151], [114, 151], [188, 225], [188, 225], [6, 43], [6, 43]], [[40, 77], [114, 151], [114, 151], [188, 225], [188, 225], [6, 43], [6, 43]], [[80, 117], [154, 191], [154, 191], [228, 9], [228, 9], [46, 83], [46, 83]], [[80, 117], [154, 191], [154, 191], [228, 9], [228, 9], [46, 83], [46, 83]]]]
NN_U8_HP = [[[[0, 37], [148, 185], [222, 3]], [[80, 117], [228, 9], [46, 83]]]]
RI_SINGLE = [[[0, 1108606976], [1125384192, 1127809024]], [[1114636288, 1120010240], [1129316352, 1122631680]]]


@pytest.mark.parametrize("build, want", [
    (lambda: tf.image.resize_bilinear(R, [5, 3]), BIL_U8),
    (lambda: tf.image.resize_bilinear(RF, [4, 7], align_corners=True), BIL_F32_AC),
    (lambda: tf.image.resize_bilinear(RF, [2, 5], half_pixel_centers=True), BIL_F32_HP),
    (lambda: tf.image.resize_images(R[0], [2, 2]), RI_SINGLE),
])
def test_bilinear_bits_as_tensorflow(build, want):
    t = build()
    out = run(t)
    assert t.dtype == tf.float32 and out.dtype == np.float32
    assert t.shape.as_list() == list(out.shape)
    assert bits(out) == want


@pytest.mark.parametrize("build, want", [
    (lambda: tf.image.resize_nearest_neighbor(R, [5, 7]), NN_U8),
    (lambda: tf.image.resize_nearest_neighbor(R, [5, 7], align_corners=True), NN_U8_AC),
    (lambda: tf.image.resize_nearest_neighbor(R, [2, 3], half_pixel_centers=True), NN_U8_HP),
    (lambda: tf.image.resize_images(R, [5, 7], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR), NN_U8),
])
def test_nearest_neighbor_as_tensorflow(build, want):
    t = build()
    out = run(t)
    assert t.dtype == tf.uint8 and out.dtype == np.uint8
    assert out.tolist() == want


def test_resize_images_shapes_and_checks():
    # The known size: the images themselves, dtype kept, as TensorFlow.
    same = tf.image.resize_images(R, [3, 4])
    assert same.dtype == tf.uint8 and run(same).tolist() == R.tolist()
    assert tf.image.resize(R[0], [5, 5]).shape.as_list() == [5, 5, 2]
    p = tf.placeholder_with_default(R[0], [None, None, 2])
    assert tf.image.resize_images(p, [4, 5]).shape.as_list() == [4, 5, 2]
    s = tf.placeholder_with_default([4, 5], [2])
    t = tf.image.resize_images(R, s)
    assert t.shape.as_list() == [1, None, None, 2] and run(t).shape == (1, 4, 5, 2)
    # preserve_aspect_ratio: scale min(10/3, 10/4) = 2.5 of 3 × 4 (observed).
    assert run(tf.image.resize_images(R, [10, 10], preserve_aspect_ratio=True)).shape == (1, 8, 10, 2)
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize_images(R[0, 0], [3, 3])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        tf.image.resize_images(R, [3, 3, 3])
    with pytest.raises(ValueError, match="1-D int32 Tensor"):
        tf.image.resize_images(R, [3.0, 3])
    with pytest.raises(ValueError, match="Dimension -2 must be >= 0"):
        tf.image.resize_images(R, [-2, 3])
    with pytest.raises(ValueError, match="Resize method is not implemented"):
        tf.image.resize_images(R, [2, 3], method=7)
    with pytest.raises(ValueError, match="rank 4"):
        tf.image.resize_bilinear(R[0], [3, 3])
    with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive"):
        run(tf.image.resize_images(R, [0, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive"):
        run(tf.image.resize_bilinear(R, [-1, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="align_corners must be False"):
        run(tf.image.resize_bilinear(R, [3, 3], align_corners=True, half_pixel_centers=True))


# ------------------------------------------------------- hue and saturation

H = np.array([[[0.5, 0.5, 0.5], [0, 0, 0], [1, 0, 0], [0.2, 0.9, 0.4]],
              [[0.3, 0.3, 0.8], [0.9, 0.1, 0.6], [1.4, -0.2, 0.5], [0.05, 0.6, 0.61]]], np.float32)
HU8 = (H.clip(0, 1) * 255).astype(np.uint8)

# TensorFlow's outputs (floats as their uint32 bits).
HUE_F32 = [[[1056964608, 1056964608, 1056964608], [0, 0, 0], [0, 1065353216, 1046562752], [1057870579, 1045220557, 1063675494]], [[1061997773, 1053944714, 1050253722], [1054414463, 1063675494, 1036831949], [1041730867, 1068708659, 3192704205], [1058810102, 1028443341, 1056186151]]]
HUE_F32_NEG = [[[1056964608, 1056964608, 1056964608], [0, 0, 0], [1063004408, 1065353216, 0], [1045220557, 1058675884, 1063675494]], [[1061997773, 1050253722, 1060823369], [1063675494, 1057165933, 1036831949], [1068708659, 1064078145, 3192704205], [1041086643, 1028443341, 1058810102]]]
HUE_U8 = [[[127, 127, 127], [0, 0, 0], [204, 255, 0], [51, 142, 229]], [[204, 76, 178], [229, 142, 25], [255, 179, 0], [42, 12, 155]]]
SAT_F32 = [[[1056964608, 1056964608, 1056964608], [0, 0, 0], [1065353216, 0, 0], [0, 1063675494, 1048815677]], [[0, 0, 1061997773], [1063675494, 0, 1058013184], [1068708659, 0, 1058852045], [0, 1058627351, 1058810102]]]
SAT_U8 = [[[127, 127, 127], [0, 0, 0], [255, 153, 153], [158, 229, 178]], [[153, 153, 204], [229, 147, 198], [255, 153, 204], [97, 154, 155]]]


@pytest.mark.parametrize("build, want", [
    (lambda: bits(run(tf.image.adjust_hue(H, 0.37))), HUE_F32),
    (lambda: bits(run(tf.image.adjust_hue(H, -0.81))), HUE_F32_NEG),
    (lambda: run(tf.image.adjust_hue(HU8, 0.2)).tolist(), HUE_U8),
    (lambda: bits(run(tf.image.adjust_saturation(H, 1.6))), SAT_F32),
    (lambda: run(tf.image.adjust_saturation(HU8, 0.4)).tolist(), SAT_U8),
])
def test_hue_and_saturation_as_tensorflow(build, want):
    assert build() == want


def test_hue_and_saturation_checks_and_random_versions():
    with pytest.raises(ValueError, match="at least rank 3"):
        tf.image.adjust_hue(H[0], 0.1)
    with pytest.raises(errors.InvalidArgumentError, match="input must have 3 channels but instead has 2 channels"):
        run(tf.image.adjust_saturation(H[..., :2], 0.5))
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(HU8, 0.6)
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tf.image.random_hue(HU8, -0.1)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_saturation(HU8, 0.5, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_saturation(HU8, -0.5, 0.5)
    t = tf.image.random_hue(H, 0.4, seed=1)
    u = tf.image.random_saturation(HU8, 0.2, 1.5)
    assert t.dtype == tf.float32 and u.dtype == tf.uint8 and t.shape.as_list() == [2, 4, 3]
    with tf.Session() as s:
        assert len({str(bits(s.run(t))) for _ in range(10)}) > 5
        assert len({str(s.run(u).tolist()) for _ in range(10)}) > 5


# --------------------------------------------- sample_distorted_bounding_box

BOX = np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32)


@pytest.mark.parametrize("dtype, minus_one", [(np.int32, -1), (np.int64, -1), (np.uint8, 255)])
def test_sample_distorted_bounding_box_shapes_and_dtypes(dtype, minus_one):
    begin, size, boxes = tf.image.sample_distorted_bounding_box(np.array([40, 60, 3], dtype), BOX)
    assert [t.shape.as_list() for t in (begin, size, boxes)] == [[3], [3], [1, 1, 4]]
    assert (begin.dtype, size.dtype, boxes.dtype) == (tf.as_dtype(dtype), tf.as_dtype(dtype), tf.float32)
    with tf.Session() as s:
        for _ in range(20):
            b, z, f = s.run([begin, size, boxes])
            assert b.dtype == dtype and b[2] == 0 and z[2] == minus_one
            assert b[0] + z[0] <= 40 and b[1] + z[1] <= 60 and z[0] > 0 and z[1] > 0
            assert f.tolist() == [[[np.float32(b[0]) / 40, np.float32(b[1]) / 60,
                                    np.float32(b[0] + z[0]) / 40, np.float32(b[1] + z[1]) / 60]]]


def test_sample_distorted_bounding_box_draws_and_covers():
    begin, size, _ = tf.image.sample_distorted_bounding_box([40, 60, 3], BOX, min_object_covered=0.3)
    with tf.Session() as s:
        crops = [tuple(s.run(begin).tolist() + s.run(size).tolist()) for _ in range(50)]
    assert len(set(crops)) > 20
    # An object no crop can cover enough of: the whole image (observed).
    out = tf.image.sample_distorted_bounding_box([40, 60, 3], BOX, min_object_covered=1.5)
    assert [v.tolist() for v in run(list(out))] == [[0, 0, 0], [40, 60, -1], [[[0.0, 0.0, 1.0, 1.0]]]]
    # A reversed area range is accepted and gives the whole image (observed).
    out = tf.image.sample_distorted_bounding_box([40, 60, 3], BOX, area_range=[0.5, 0.2])
    assert run(out[1]).tolist() == [40, 60, -1]


def test_sample_distorted_bounding_box_checks():
    sdbb = tf.image.sample_distorted_bounding_box
    with pytest.raises(TypeError, match="image_size"):
        sdbb(np.array([40, 60, 3], np.float32), BOX)
    with pytest.raises(ValueError):
        sdbb([40, 60], BOX)
    with pytest.raises(ValueError, match="rank 3"):
        sdbb([40, 60, 3], BOX[0])
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        sdbb([40, 60, 3], BOX[..., :3])
    # The rest fails when run, as TensorFlow's kernel.
    for kwargs in [dict(bounding_boxes=[[[0.1, 0.2, 1.6, 0.7]]]),
                   dict(bounding_boxes=np.zeros((1, 0, 4), np.float32)),
                   dict(area_range=[0.0, 1.0]), dict(area_range=[0.5, 1.2]), dict(area_range=[0.5, 0.6, 0.7]),
                   dict(aspect_ratio_range=[0.0, 1.0]), dict(max_attempts=0),
                   dict(min_object_covered=-0.5)]:
        kwargs.setdefault("bounding_boxes", BOX)
        out = sdbb([40, 60, 3], **kwargs)
        with pytest.raises(errors.InvalidArgumentError):
            run(out[0])
    out = sdbb([40, 60, 3], np.zeros((1, 0, 4), np.float32), use_image_if_no_bounding_boxes=True)
    assert run(out[1])[2] == -1


def test_sample_distorted_bounding_box_seeded_repeats():
    def draws():
        with tf.Graph().as_default():
            begin, size, _ = tf.image.sample_distorted_bounding_box([40, 60, 3], BOX, seed=4)
            with tf.Session() as s:
                return [s.run(size).tolist() for _ in range(5)]
    assert draws() == draws()


def test_central_crop_of_an_image_of_unknown_size():
    img = np.arange(5 * 7 * 2).reshape(5, 7, 2).astype(np.uint8)
    p = tf.placeholder_with_default(img, [None, None, 2])
    t = tf.image.central_crop(p, 0.4)
    assert t.shape.as_list() == [None, None, 2]
    # Offsets int((5 - 2.0) / 2) = 1 and int((7 - 2.8) / 2) = 2 (observed).
    assert run(t).tolist() == img[1:4, 2:5].tolist()
    q = tf.placeholder_with_default(np.stack([img, img]), [2, None, 7, 2])
    assert tf.image.central_crop(q, 0.4).shape.as_list() == [2, None, 3, 2]
    with pytest.raises(ValueError, match="Had rank = None"):
        tf.image.central_crop(tf.placeholder(tf.uint8), 0.5)


def test_convert_image_dtype_without_saturation_wraps_as_tensorflow():
    v = np.array([-2, -1, -0.5, -0.001, 0, 0.2, 0.5, 0.999, 1.0, 1.5], np.float32)
    observed = {
        "uint8": [1, 1, 129, 0, 0, 51, 127, 255, 255, 127],
        "int8": [1, -127, -63, 0, 0, 25, 63, 127, 127, -65],
        "int16": [1, -32767, -16383, -32, 0, 6553, 16383, 32734, 32767, -16385],
        "uint16": [1, 1, 32769, 65471, 0, 13107, 32767, 65469, 65535, 32767],
    }
    for name, want in observed.items():
        assert run(tf.image.convert_image_dtype(v, getattr(tf, name))).tolist() == want


def test_rot90_and_transpose_image():
    a = np.arange(2 * 3 * 2).reshape(2, 3, 2).astype(np.uint8)
    for k in (0, 1, 2, 3, 4, -1, 5):
        t = tf.image.rot90(a, k)
        # TensorFlow picks the turn when run: height and width unknown.
        assert t.shape.as_list() == [None, None, 2]
        assert run(t).tolist() == np.rot90(a, k).tolist()
    b = np.arange(2 * 2 * 3).reshape(2, 2, 3, 1).astype(np.float32)
    t = tf.image.rot90(b, 3)
    assert t.shape.as_list() == [2, None, None, 1]
    assert run(t).tolist() == np.rot90(b, 3, axes=(1, 2)).tolist()
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tf.image.rot90(a[0])
    t = tf.image.transpose_image(tf.placeholder_with_default(a, [None, 3, None]))
    assert t.shape.as_list() == [3, None, None]
    assert run(t).tolist() == a.transpose(1, 0, 2).tolist()
    assert run(tf.image.transpose(b)).tolist() == b.transpose(0, 2, 1, 3).tolist()


def test_resize_size_as_a_list_holding_tensors_and_factor_dtypes():
    img = np.zeros((5, 6, 3), np.uint8)
    t = tf.image.resize_images(img, [tf.placeholder_with_default(4, []), 7])
    assert t.shape.as_list() == [None, 7, 3] and run(t).shape == (4, 7, 3)
    assert tf.image.resize_images(img, [tf.constant(4), tf.constant(7)]).shape.as_list() == [4, 7, 3]
    with pytest.raises(ValueError, match="'size' must be a 1-D int32 Tensor"):
        tf.image.resize_images(img, tf.constant([4, 7], tf.int64))
    with pytest.raises(TypeError, match="Input 'contrast_factor' of 'AdjustContrastv2' Op has type float64"):
        tf.image.adjust_contrast(img, tf.constant(1.5, tf.float64))
    with pytest.raises(TypeError, match="Input 'delta' of 'AdjustHue' Op has type float64"):
        tf.image.adjust_hue(img, tf.constant(0.5, tf.float64))


def test_pad_and_crop_or_pad_with_targets_computed_when_run():
    img = (np.arange(5 * 6 * 3) % 251 + 1).astype(np.uint8).reshape(5, 6, 3)
    P = lambda v: tf.placeholder_with_default(v, [])  # noqa: E731
    t = tf.image.pad_to_bounding_box(img, P(1), 2, 8, P(9))
    assert t.shape.as_list() == [8, None, 3]
    out = run(t)
    assert out.shape == (8, 9, 3) and out[1:6, 2:8].tolist() == img.tolist() and out.sum() == img.sum()
    with pytest.raises(errors.InvalidArgumentError, match="height must be <= target - offset"):
        run(tf.image.pad_to_bounding_box(img, 4, 2, P(8), 9))
    with pytest.raises(errors.InvalidArgumentError, match="offset_height must be >= 0"):
        run(tf.image.pad_to_bounding_box(img, P(-1), 2, 8, 9))
    # What is known is still checked when built.
    with pytest.raises(ValueError, match="width must be <= target - offset"):
        tf.image.pad_to_bounding_box(img, P(1), 4, 8, 9)
    t = tf.image.resize_image_with_crop_or_pad(img, P(3), 9)
    assert t.shape.as_list() == [None, 9, 3]
    assert run(t).tolist() == run(tf.image.resize_image_with_crop_or_pad(img, 3, 9)).tolist()
    with pytest.raises(errors.InvalidArgumentError, match="target_height must be > 0"):
        run(tf.image.resize_image_with_crop_or_pad(img, P(0), 9))
    with pytest.raises(errors.InvalidArgumentError, match="target_width must be > 0"):
        run(tf.image.resize_image_with_crop_or_pad(img, 3, P(-2)))


def test_decode_and_crop_jpeg_as_tensorflow():
    import pathlib

    data = (pathlib.Path(__file__).resolve().parents[2] / "feedstock/tests/data/golden/jpeg/04.jpg").read_bytes()
    full = run(tf.image.decode_jpeg(data, channels=3))
    t = tf.image.decode_and_crop_jpeg(data, [3, 5, 10, 20], channels=3)
    # A constant window gives the static size. On this window of the
    # 31 × 44 JPEG TensorFlow 2.21 gives the pixels of the full decode;
    # not on every window: its crop (libjpeg-turbo's jpeg_crop_scanline
    # and jpeg_skip_scanlines) upsamples chroma differently at some edges
    # ([1, 2, 4, 4], [8, 16, 8, 16]), where feedstock gives the full
    # decode's window (test_compat_more.py, feedstock's own).
    assert t.shape.as_list() == [10, 20, 3]
    assert run(t).tolist() == full[3:13, 5:25].tolist()
    w = tf.placeholder_with_default([1, 2, 4, 4], [4])
    t = tf.image.decode_and_crop_jpeg(data, w)
    assert t.shape.as_list() == [None, None, None]
    assert run(t).shape == (4, 4, 3)
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.image.decode_and_crop_jpeg(data, [full.shape[0] - 1, 5, 10, 20]))
    with pytest.raises(ValueError):
        tf.image.decode_and_crop_jpeg(data, [0, 0, 3])
    with pytest.raises(TypeError, match="crop_window"):
        tf.image.decode_and_crop_jpeg(data, tf.constant([0, 0, 3, 3], tf.int64))


@pytest.mark.parametrize("name, want", [("00.jpg", [26, 41, 3]), ("02.jpg", [48, 6, 1]), ("04.jpg", [31, 44, 3]),
                                        ("10.jpg", [25, 47, 1])])
def test_extract_jpeg_shape_as_tensorflow(name, want):
    import pathlib

    data = (pathlib.Path(__file__).resolve().parents[2] / "feedstock/tests/data/golden/jpeg" / name).read_bytes()
    t = tf.image.extract_jpeg_shape(data)
    assert t.dtype == tf.int32 and t.shape.as_list() == [3]
    assert run(t).tolist() == want
    assert run(tf.image.extract_jpeg_shape(data, tf.int64)).dtype == np.int64
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tf.image.extract_jpeg_shape(data[:20]))
    with pytest.raises(TypeError, match="output_type"):
        tf.image.extract_jpeg_shape(data, tf.float32)
    with pytest.raises(ValueError):
        tf.image.extract_jpeg_shape([data, data])
