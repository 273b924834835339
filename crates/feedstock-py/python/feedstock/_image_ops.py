"""TensorFlow 1's image ops (``tf.image.*``) over the native graph: crops
and pads, flips, colour adjustments, resizing, drawing and encoding."""

import collections
import math
import operator

import numpy as np

from ._graph import (
    InvalidArgumentValueError,
    Tensor,
    _name_scope,
    _next_name,
    _op,
    _ops,
    _random_seed,
    _scope,
    as_dtype,
    constant,
    convert_to_tensor,
    expand_dims,
    float32,
    int32,
    squeeze,
    stack,
    string,
    uint8,
)


# ---------------------------------------------------------------- images


def _image(op_type, image, scope=None, inner=None):
    x = convert_to_tensor(image)
    if scope is None:
        return _op(x.graph, op_type, [x])
    with _tf_named(x, scope, inner):
        return _op(x.graph, op_type, [x])


def _tf_named(image, scope, inner, inner_batch=None):
    """Names the next node added ``<scope>/<inner>`` (the scope made
    unique; ``inner_batch`` for a batch of images), as TensorFlow names
    the result of its image function, which it builds of several ops
    where feedstock has one."""
    batch = image.shape.ndims == 4 and inner_batch is not None
    full = f"{_scope(image.graph, None, scope)}/{inner_batch if batch else inner}"
    return _next_name(image.graph, full, exact=True)


_DECODE_DTYPES = {"jpeg": ("uint8",), "png": ("uint8", "uint16"), "any": ("uint8", "uint16", "float32")}
_DECODE_OPS = {"jpeg": "DecodeJpeg", "png": "DecodePng", "any": "DecodeImage"}


def _decode_image(contents, fmt, channels, dtype=uint8, expand_animations=True, ratio=1,
                  fancy_upscaling=True, try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                  name=None):
    """One of TensorFlow's decode ops. The attributes are checked when the
    op runs (InvalidArgumentError), as TensorFlow's kernels check them; a
    dtype the op cannot decode to is a TypeError when built, as in
    TensorFlow."""
    x = convert_to_tensor(contents)
    dtype = as_dtype(dtype)
    allowed = _DECODE_DTYPES[fmt]
    if dtype.name not in allowed:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of "
                        f"allowed values: {', '.join(allowed)}")
    if x.dtype != string:
        raise TypeError(f"Input 'contents' of '{_DECODE_OPS[fmt]}' Op has type {x.dtype.name} that does not "
                        "match expected type of string.")
    with _next_name(x.graph, name):
        return _op(x.graph, "DecodeImage", [x], format=fmt, channels=operator.index(channels or 0),
                   dtype=dtype.name, expand_animations=bool(expand_animations), ratio=operator.index(ratio),
                   fancy_upscaling=bool(fancy_upscaling), try_recover_truncated=bool(try_recover_truncated),
                   acceptable_fraction=float(acceptable_fraction), dct_method=str(dct_method))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """``tf.io.decode_jpeg``: decodes a JPEG, PNG or single-frame GIF (the
    JPEG attributes apply to JPEG data only) to uint8 ``[h, w, c]``."""
    return _decode_image(contents, "jpeg", channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                         try_recover_truncated=try_recover_truncated,
                         acceptable_fraction=acceptable_fraction, dct_method=dct_method, name=name)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """``tf.image.decode_and_crop_jpeg``: :func:`decode_jpeg` then the
    window ``[y, x, height, width]`` (an int32 vector) of the image (the
    pixels TensorFlow's cropped decode gives); a window outside the image
    fails when run (InvalidArgumentError). A constant window gives the
    static height and width."""
    image = decode_jpeg(contents, channels, ratio, fancy_upscaling, try_recover_truncated,
                        acceptable_fraction, dct_method)
    g = image.graph
    with g.as_default():
        window = crop_window if isinstance(crop_window, Tensor) else convert_to_tensor(crop_window, dtype=int32)
        if window.dtype != int32:
            raise TypeError(f"Input 'crop_window' of 'DecodeAndCropJpeg' Op has type {window.dtype.name} that "
                            "does not match expected type of int32.")
        dims = window.shape._dims
        if dims is not None and (len(dims) != 1 or dims[0] not in (None, 4)):
            raise ValueError(f"crop_window must be a vector of 4 values, got shape {window.shape}")
        known = _static_ints(window)
        parts = ([convert_to_tensor(v, dtype=int32) for v in known] if known is not None
                 else [window[k] for k in range(4)])
    return _op(g, "CropToBoxInputs", [image, *parts])


def extract_jpeg_shape(contents, output_type=int32, name=None):
    """``tf.image.extract_jpeg_shape``: ``[height, width, channels]`` of a
    JPEG from its header (int32 or int64); data that is not a JPEG fails
    when run (InvalidArgumentError)."""
    x = convert_to_tensor(contents)
    dtype = as_dtype(output_type)
    if dtype.name not in ("int32", "int64"):
        raise TypeError(f"Value passed to parameter 'output_type' has DataType {dtype.name} not in list of "
                        "allowed values: int32, int64")
    if x.dtype != string:
        raise TypeError(f"Input 'contents' of 'ExtractJpegShape' Op has type {x.dtype.name} that does not "
                        "match expected type of string.")
    return _op(x.graph, "ExtractJpegShape", [x], dtype=dtype.name)


def decode_png(contents, channels=0, dtype=uint8, name=None):
    """``tf.io.decode_png``: decodes a PNG, JPEG or single-frame GIF to
    uint8 or uint16 ``[h, w, c]``."""
    return _decode_image(contents, "png", channels, dtype, name=name)


def is_jpeg(contents, name=None):
    """``tf.image.is_jpeg``: whether ``contents`` start with JPEG's
    signature, as TensorFlow decides it (its first three bytes, compared
    under the ``is_jpeg`` scope)."""
    from ._graph import equal, get_default_graph
    from ._text_ops import substr

    g = contents.graph if isinstance(contents, Tensor) else get_default_graph()
    with _name_scope(g, name, "is_jpeg"):
        return equal(substr(contents, 0, 3), b"\xff\xd8\xff")


def decode_image(contents, channels=None, dtype=uint8, name=None, expand_animations=True):
    """``tf.io.decode_image``: JPEG, PNG, GIF or BMP. uint8, uint16 and
    float32 are decoded directly; another dtype is the uint16 decoding
    through ``convert_image_dtype``, as in TensorFlow."""
    dtype = as_dtype(dtype)
    direct = dtype.name in _DECODE_DTYPES["any"]
    contents = convert_to_tensor(contents)
    with _name_scope(contents.graph, name, "decode_image"):
        image = _decode_image(contents, "any", channels, dtype if direct else "uint16", expand_animations)
        return image if direct else _convert_image_dtype(image, dtype)


def _convert_image_dtype(image, dtype):
    """:func:`convert_image_dtype` without saturation (``decode_image``'s
    conversion)."""
    return convert_image_dtype(image, dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``, with TensorFlow's arithmetic:
    integers scale to floats by ``1 / max`` in the float dtype, floats to
    integers by ``max + 0.5`` then a cast (``saturate``: clamped first to
    the integer range, as ``tf.saturate_cast``), integers to integers by
    a power of two; floats to floats are a cast. Named as TensorFlow's:
    the result is ``convert_image`` (or ``name``), its steps under it."""
    from . import _graph

    image = convert_to_tensor(image)
    dtype = as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if image.dtype == dtype:
        return _graph.identity(image, name=name)
    with _name_scope(image.graph, name, "convert_image") as scope:
        if image.dtype.is_floating and dtype.is_floating:
            return _graph.cast(image, dtype, name=scope)
        if image.dtype.is_integer and dtype.is_floating:
            in_max = int(np.iinfo(image.dtype.as_numpy_dtype).max)
            return _graph.multiply(_graph.cast(image, dtype), 1.0 / in_max, name=scope)
        in_max = _dtype_max(image.dtype)
        out_max = int(np.iinfo(dtype.as_numpy_dtype).max)
        if image.dtype.is_floating:
            scaled = _graph.multiply(image, out_max + 0.5)
            if saturate:
                return _saturate_cast(scaled, dtype, name=scope)
            if dtype.name in ("int8", "uint8", "int16", "uint16"):
                # TensorFlow's cast to a narrow integer truncates through
                # int32: a value out of range wraps (-0.5 → uint8 129).
                scaled = _graph.cast(scaled, int32)
            return _graph.cast(scaled, dtype, name=scope)
        if in_max > out_max:
            scaled = _graph.floordiv(image, (in_max + 1) // (out_max + 1))
            if saturate:
                return _saturate_cast(scaled, dtype, name=scope)
            return _graph.cast(scaled, dtype, name=scope)
        cast = _saturate_cast(image, dtype) if saturate else _graph.cast(image, dtype)
        return _graph.multiply(cast, (out_max + 1) // (in_max + 1), name=scope)


def _dtype_max(dtype):
    np_type = dtype.as_numpy_dtype
    return int(np.iinfo(np_type).max) if dtype.is_integer else float(np.finfo(np_type).max)


def _saturate_cast(x, dtype, name=None):
    """``tf.saturate_cast``: ``x`` clamped to the range of ``dtype`` (the
    bounds as ``x``'s dtype holds them, rounded inwards) then cast (the
    cast named ``name``)."""
    from . import _graph

    info = np.iinfo(dtype.as_numpy_dtype)
    in_type = x.dtype.as_numpy_dtype
    if x.dtype.is_integer:
        in_info = np.iinfo(in_type)
        if in_info.min < info.min:
            x = _graph.maximum(x, np.asarray(info.min).astype(in_type))
        if in_info.max > info.max:
            x = _graph.minimum(x, np.asarray(info.max).astype(in_type))
        return _graph.cast(x, dtype, name=name)
    lo, hi = in_type(info.min), in_type(info.max)
    if int(hi) > info.max:
        hi = np.nextafter(hi, in_type(0))
    if int(lo) < info.min:
        lo = np.nextafter(lo, in_type(0))
    return _graph.cast(_graph.minimum(_graph.maximum(x, lo), hi), dtype, name=name)


def _as_float_image(image):
    """The image as TensorFlow's adjust ops take it: float16 and float32
    as they are, another dtype through ``convert_image_dtype`` to
    float32."""
    if image.dtype.name in ("float16", "float32"):
        return image
    return convert_image_dtype(image, float32)


def adjust_brightness(image, delta):
    """``tf.image.adjust_brightness``: ``delta`` added to the image as
    floats, converted back to its dtype with saturation."""
    from . import _graph

    image = convert_to_tensor(image)
    # Under TensorFlow's scope: the result is adjust_brightness/Identity.
    with _name_scope(image.graph, None, "adjust_brightness"):
        flt = _as_float_image(image)
        adjusted = _graph.add(flt, _graph.cast(delta, flt.dtype) if isinstance(delta, Tensor) else delta)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: a delta drawn uniformly from
    ``[-max_delta, max_delta)`` on each run."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_brightness(image, _random_uniform(image.graph, -max_delta, max_delta, seed))


def _random_uniform(g, lo, hi, seed):
    """A float32 scalar uniform in ``[lo, hi)`` drawn on each run (``lo``
    itself when the range is empty, as TensorFlow's ``lo + (hi - lo) * u``)."""
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    if not lo < hi:
        with g.as_default():
            return constant(lo, dtype=float32)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InvalidArgumentValueError(None, None, f"random_uniform: need minval < maxval, got {lo} and {hi}")
    with _next_name(g, "random_uniform"):
        return _op(g, "RandomUniform", [], dims=[], dtype="float32", min=lo, max=hi, seed=_random_seed(g, seed))


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: TensorFlow's ``AdjustContrastv2`` on
    the image as float32, converted back with saturation."""
    images = convert_to_tensor(images)
    shape = images.shape._dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"Shape must be at least rank 3 but is rank {len(shape)}")
    if images.dtype == "float16":
        raise TypeError("adjust_contrast: a float16 image is not supported by feedstock")
    with _name_scope(images.graph, None, "adjust_contrast"):
        flt = _as_float_image(images)
        g = flt.graph
        factor = _factor(g, contrast_factor, "contrast_factor", "AdjustContrastv2")
        adjusted = _op(g, "Adjust", [flt, factor], op="contrast")
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def _factor(g, value, arg, op):
    """An adjust op's float32 factor; a tensor of another dtype is
    TensorFlow's TypeError."""
    if isinstance(value, Tensor) and value.dtype != float32:
        raise TypeError(f"Input '{arg}' of '{op}' Op has type {value.dtype.name} that does not match "
                        "expected type of float32.")
    with g.as_default():
        return convert_to_tensor(value, dtype=float32)


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: a factor drawn uniformly from
    ``[lower, upper)`` on each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_contrast(image, _random_uniform(image.graph, lower, upper, seed))


def _adjust_hsv(op, image, factor, name):
    """TensorFlow's ``AdjustHue`` / ``AdjustSaturation`` on the image as
    float32, converted back to its dtype without saturation (as
    TensorFlow's ``adjust_hue`` and ``adjust_saturation``), under their
    scope (``adjust_hue/Identity``)."""
    image = convert_to_tensor(image)
    shape = image.shape._dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"Shape must be at least rank 3 but is rank {len(shape)}")
    if image.dtype == "float16":
        raise TypeError(f"adjust_{op}: a float16 image is not supported by feedstock")
    with _name_scope(image.graph, name, f"adjust_{op}"):
        flt = _as_float_image(image)
        g = flt.graph
        factor = _factor(g, factor, *{"hue": ("delta", "AdjustHue"), "saturation": ("scale", "AdjustSaturation")}[op])
        adjusted = _op(g, "Adjust", [flt, factor], op=op)
        return convert_image_dtype(adjusted, image.dtype)


def adjust_hue(image, delta, name=None):
    """``tf.image.adjust_hue``: the hue of each RGB pixel turned by
    ``delta`` (in ``[-1, 1]``), TensorFlow's kernel bit for bit."""
    return _adjust_hsv("hue", image, delta, name)


def adjust_saturation(image, saturation_factor, name=None):
    """``tf.image.adjust_saturation``: each RGB pixel's saturation scaled
    by ``saturation_factor`` (clamped to [0, 1]) in HSV."""
    return _adjust_hsv("saturation", image, saturation_factor, name)


def random_hue(image, max_delta, seed=None):
    """``tf.image.random_hue``: a delta drawn uniformly from
    ``[-max_delta, max_delta)`` on each run."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_hue(image, _random_uniform(image.graph, -max_delta, max_delta, seed))


def random_saturation(image, lower, upper, seed=None):
    """``tf.image.random_saturation``: a factor drawn uniformly from
    ``[lower, upper)`` on each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    image = convert_to_tensor(image)
    return adjust_saturation(image, _random_uniform(image.graph, lower, upper, seed))


def _known_int(v):
    """A box argument's value if known when building (a Python or numpy
    int, or a constant scalar tensor), else ``None``."""
    if isinstance(v, Tensor):
        if v._const is None:
            return None
        v = v._const
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.item()
    return operator.index(v)


def _static_box_int(v, what):
    """A box argument that must be known when building."""
    known = _known_int(v)
    if known is None:
        raise NotImplementedError(f"feedstock needs {what} known when the graph is built")
    return known


def _box_tensors(g, values):
    """Box arguments as int32 scalar tensors (tensors kept as they are)."""
    with g.as_default():
        return [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in values]


def _image_rank_3_or_4(image):
    shape = image.shape._dims
    if shape is not None and len(shape) not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if shape is not None and 0 in shape[-3:]:
        raise ValueError("inner 3 dims of 'image.shape' must be > 0.")
    return shape


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.pad_to_bounding_box``: the image at the offset in a
    target-size image of zeros; what is known when built is checked then
    (ValueError), the rest when run (InvalidArgumentError), as
    TensorFlow's assertions."""
    image = convert_to_tensor(image)
    shape = _image_rank_3_or_4(image)
    box = (offset_height, offset_width, target_height, target_width)
    oh, ow, th, tw = (_known_int(v) for v in box)
    if oh is not None and oh < 0:
        raise ValueError("offset_height must be >= 0")
    if ow is not None and ow < 0:
        raise ValueError("offset_width must be >= 0")
    h, w = (shape[-3], shape[-2]) if shape is not None else (None, None)
    if None not in (w, tw, ow) and tw - ow - w < 0:
        raise ValueError("width must be <= target - offset")
    if None not in (h, th, oh) and th - oh - h < 0:
        raise ValueError("height must be <= target - offset")
    g = image.graph
    if None in (oh, ow, th, tw):
        parts = _box_tensors(g, box)
        with _tf_named(image, "pad_to_bounding_box", "Squeeze", "Pad"):
            return _op(g, "PadToBoxInputs", [image, *parts])
    if th < 0 or tw < 0:
        raise ValueError("width must be <= target - offset")
    with _tf_named(image, "pad_to_bounding_box", "Squeeze", "Pad"):
        return _op(g, "PadToBox", [image], offset_height=oh, offset_width=ow, target_height=th, target_width=tw)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """``tf.image.resize_image_with_crop_or_pad``: centrally cropped
    and/or zero-padded to the target size, decided when run from the
    image's size; a target given as a tensor is checked when run."""
    image = convert_to_tensor(image)
    _image_rank_3_or_4(image)
    th, tw = _known_int(target_height), _known_int(target_width)
    if tw is not None and tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th is not None and th <= 0:
        raise ValueError("target_height must be > 0.")
    g = image.graph
    named = ("resize_image_with_crop_or_pad", "Squeeze", "control_dependency_1")
    if th is None or tw is None:
        parts = _box_tensors(g, (target_height, target_width))
        with _tf_named(image, *named):
            return _op(g, "CropOrPadInputs", [image, *parts])
    with _tf_named(image, *named):
        return _op(g, "CropOrPad", [image], target_height=th, target_width=tw)


def central_crop(image, central_fraction):
    """``tf.image.central_crop``: the central ``central_fraction`` of the
    image's height and width (the offsets ``int((d - d * f) / 2)`` as
    TensorFlow computes them in float64), of an image whose size is
    known or not."""
    image = convert_to_tensor(image)
    f = central_fraction._const if isinstance(central_fraction, Tensor) else central_fraction
    if f is None:
        raise NotImplementedError("feedstock needs central_fraction known when the graph is built")
    f = float(np.asarray(f).item()) if isinstance(f, (np.ndarray, np.generic)) else f
    if f <= 0.0 or f > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if f == 1.0:
        return image
    shape = image.shape._dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    if shape is None or len(shape) not in (3, 4):
        raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. "
                         f"Had rank = {None if shape is None else len(shape)}.")
    with _tf_named(image, "central_crop", "Slice"):
        return _op(image.graph, "CentralCrop", [image], fraction=float(f))


def transpose_image(image):
    """``tf.image.transpose_image`` (``tf.image.transpose``): height and
    width swapped, of an image or a batch."""
    from . import _graph

    image = convert_to_tensor(image)
    shape = _image_rank_3_or_4(image)
    if shape is None:
        raise ValueError("'image' (shape <unknown>) must have either 3 or 4 dimensions.")
    return _graph.transpose(image, [1, 0, 2] if len(shape) == 3 else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """``tf.image.rot90``: ``k`` quarter turns counter-clockwise, as
    TensorFlow composes them (a flip and a transpose); ``k`` must be
    known when the graph is built."""
    from . import _graph

    image = convert_to_tensor(image)
    shape = image.shape._dims
    if shape is not None and len(shape) < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    shape = _image_rank_3_or_4(image)
    if shape is None:
        raise ValueError("'image' (shape <unknown>) must have either 3 or 4 dimensions.")
    k = _static_box_int(k, "k") % 4
    if k == 1:
        out = transpose_image(flip_left_right(image))
    elif k == 2:
        out = flip_up_down(flip_left_right(image))
    elif k == 3:
        out = flip_left_right(transpose_image(image))
    else:
        out = image
    # TensorFlow chooses the turn when run (a case on k): the height and
    # width are unknown statically, whatever k.
    static = shape[:-3] + [None, None, shape[-1]]
    return _graph.placeholder_with_default(out, static)


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image flipped top to bottom
    with probability 1/2, drawn each run."""
    x = convert_to_tensor(image)
    seed = _random_seed(x.graph, seed)
    with _tf_named(x, "random_flip_up_down", "Merge", "add"):
        return _op(x.graph, "RandomFlip", [x], up_down=True, seed=seed)


class ResizeMethod:
    """``tf.image.ResizeMethod`` of TensorFlow 1 (``ResizeMethodV1``)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _resize_size(g, size):
    """A resize's ``size`` as an int32 ``[height, width]`` tensor and what
    is known of it when built (``[h or None, w or None]``)."""
    static = [None, None]
    with g.as_default():
        if isinstance(size, (list, tuple)) and any(isinstance(v, Tensor) for v in size):
            # TensorFlow packs a list holding tensors; each constant part
            # is known statically.
            static = [_static_ints([v])[0] if _static_ints([v]) is not None else None for v in size]
            size = stack([v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in size])
        elif not isinstance(size, Tensor):
            try:
                size = convert_to_tensor(size, dtype=int32)
            except (TypeError, ValueError) as e:
                raise ValueError("'size' must be a 1-D int32 Tensor") from e
    if size.dtype != int32:
        raise ValueError("'size' must be a 1-D int32 Tensor")
    dims = size.shape._dims
    if dims is not None and (len(dims) != 1 or dims[0] not in (None, 2)):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    known = _static_ints(size) if size._const is not None else None
    if known is not None:
        static = known
    return size, [v if v is not None and v > 0 else None for v in static]


def _resize_op(images, size, bilinear, align_corners, half_pixel_centers, name=None):
    """TensorFlow's ``ResizeBilinear`` / ``ResizeNearestNeighbor`` on 4-D
    images: ``size`` an int32 ``[height, width]`` (what is constant gives
    the static shape)."""
    g = images.graph
    size, static = _resize_size(g, size)
    with _next_name(g, name):
        return _op(g, "Resize", [images, size], bilinear=bilinear, align_corners=bool(align_corners),
                   half_pixel_centers=bool(half_pixel_centers), static_height=static[0], static_width=static[1])


def _rank4_images(images):
    images = convert_to_tensor(images)
    shape = images.shape._dims
    if shape is not None and len(shape) != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {len(shape)}")
    return images


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_bilinear`` (TensorFlow's ``ResizeBilinear``):
    4-D images to float32, bit for bit TensorFlow's."""
    return _resize_op(_rank4_images(images), size, True, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_nearest_neighbor``: 4-D images, keeping their
    dtype."""
    return _resize_op(_rank4_images(images), size, False, align_corners, half_pixel_centers, name)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """``tf.image.resize_images`` (TensorFlow 1's ``tf.image.resize``):
    an image or a batch; bilinear gives float32, nearest neighbour the
    input's dtype; a size equal to the known size returns the images
    unchanged, as TensorFlow does. ``method`` is a ``ResizeMethod`` (an
    integer 0..3); bicubic and area resizing give float32 too."""
    images = convert_to_tensor(images)
    shape = images.shape._dims
    if shape is None:
        raise ValueError("'images' contains no shape.")
    if len(shape) not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR,
                      ResizeMethod.BICUBIC, ResizeMethod.AREA):
        raise ValueError(f"Resize method is not implemented: {method}")
    height, width = shape[-3], shape[-2]
    known = _static_ints(size)
    if preserve_aspect_ratio:
        if known is None or height is None or width is None:
            raise NotImplementedError("feedstock's preserve_aspect_ratio needs the sizes known when built")
        f = min(np.float32(known[0]) / np.float32(height), np.float32(known[1]) / np.float32(width))
        known = [int(np.round(f * np.float32(height))), int(np.round(f * np.float32(width)))]
        size = known
    for v in known or ():
        if v < 0:  # TensorFlow's set_shape of the output
            raise ValueError(f"Dimension {v} must be >= 0")
    # As TensorFlow: under a `resize` scope, one image made a batch of one
    # (ExpandDims) and back (Squeeze), also when the size does not change.
    with _name_scope(images.graph, name, "resize"):
        single = len(shape) == 3
        batch = expand_dims(images, 0) if single else images
        if known is not None and len(known) == 2 and [height, width] == known:
            out = batch
        elif method == ResizeMethod.BICUBIC:
            out = resize_bicubic(batch, size, align_corners)
        elif method == ResizeMethod.AREA:
            out = resize_area(batch, size, align_corners)
        else:
            out = _resize_op(batch, size, method == ResizeMethod.BILINEAR, align_corners, False)
        return squeeze(out, [0]) if single else out


# ------------------------------------------- image ops: resize, colour, gamma


def _resize_extra(op_type, images, size, name=None, **attrs):
    """TensorFlow's ``ResizeBicubic`` / ``ResizeArea`` on 4-D images."""
    images = _rank4_images(images)
    g = images.graph
    size, static = _resize_size(g, size)
    known = [-1 if v is None else v for v in static]
    with _next_name(g, name):
        return _op(g, op_type, [images, size], static_size=known, **attrs)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """``tf.image.resize_bicubic`` (TensorFlow's ``ResizeBicubic``): 4-D
    images to float32, bit for bit TensorFlow's; ``half_pixel_centers``
    uses Keys' cubic (TensorFlow 2's ``tf.image.resize`` bicubic)."""
    return _resize_extra("ResizeBicubic", images, size, name, align_corners=bool(align_corners),
                         half_pixel_centers=bool(half_pixel_centers))


def resize_area(images, size, align_corners=False, name=None):
    """``tf.image.resize_area`` (TensorFlow's ``ResizeArea``): each output
    pixel the mean of the source area it covers, float32, bit for bit
    TensorFlow's."""
    return _resize_extra("ResizeArea", images, size, name, align_corners=bool(align_corners))


def _colour_op(op_type, images):
    from ._graph import _op

    images = convert_to_tensor(images)
    return _op(images.graph, op_type, [images])


def rgb_to_hsv(images, name=None):
    """``tf.image.rgb_to_hsv`` (TensorFlow's ``RGBToHSV``): RGB pixels in
    [0, 1] (last axis of 3, float32 or float64) as hue, saturation and
    value, bit for bit TensorFlow's."""
    return _colour_op("RGBToHSV", images)


def hsv_to_rgb(images, name=None):
    """``tf.image.hsv_to_rgb`` (TensorFlow's ``HSVToRGB``), bit for bit
    TensorFlow's."""
    return _colour_op("HSVToRGB", images)


def adjust_gamma(image, gamma=1, gain=1):
    """``tf.image.adjust_gamma``: ``gain * image ** gamma`` on a float16 or
    float32 image, any other converted to float32 as TensorFlow does (and
    back with saturation). A negative ``gamma`` known when built raises
    ValueError; one given as a tensor fails when run. The power is the
    platform's ``powf``: TensorFlow's vectorised ``pow`` can differ from it
    by one unit in the last place."""
    from ._graph import _op

    image = convert_to_tensor(image)
    known = gamma._const if isinstance(gamma, Tensor) else gamma
    if not isinstance(gamma, Tensor) and known is not None and np.asarray(known).item() < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    orig = image.dtype
    # Under TensorFlow's scope: the result of a float image is
    # adjust_gamma/Identity, as there.
    with _name_scope(image.graph, None, "adjust_gamma"):
        flt = image if orig.name in ("float16", "float32") else convert_image_dtype(image, float32)
        g = flt.graph
        with g.as_default():
            gamma_t = gamma if isinstance(gamma, Tensor) else convert_to_tensor(gamma, dtype=flt.dtype)
            gain_t = gain if isinstance(gain, Tensor) else convert_to_tensor(gain, dtype=flt.dtype)
        adjusted = _op(g, "AdjustGamma", [flt, gamma_t, gain_t])
        return convert_image_dtype(adjusted, orig, saturate=True)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """``tf.image.draw_bounding_boxes``: the boxes' one-pixel outlines
    (``[ymin, xmin, ymax, xmax]`` in [0, 1]) over float32 or float16
    images ``[batch, height, width, 1|3|4]``, box ``k`` in colour ``k``
    of ``colors`` (cycled) or of TensorFlow's default table, bit for bit
    TensorFlow's kernel (an inverted box or one wholly outside is
    skipped; edges outside the image are not drawn). An array given for
    ``images`` is converted to float32 unless it is float16, as
    TensorFlow's op does."""
    from ._graph import _op

    def as_float(x):
        if isinstance(x, Tensor) or getattr(x, "dtype", None) == np.float16:
            return convert_to_tensor(x)
        return convert_to_tensor(x, dtype=float32)

    images = as_float(images)
    inputs = [images, as_float(boxes)] + ([] if colors is None else [as_float(colors)])
    return _op(images.graph, "DrawBoundingBoxes", inputs)


def encode_png(image, compression=-1, name=None):
    """``tf.image.encode_png`` (TensorFlow's ``EncodePng``): a 3-D uint8
    or uint16 image with 1 to 4 channels as the bytes of a PNG (a string
    scalar); ``decode_png`` of it gives the image back exactly. The bytes
    are feedstock's encoder's, not TensorFlow's."""
    from ._graph import _op

    if not isinstance(image, Tensor):
        uint16 = getattr(image, "dtype", None) == np.uint16
        image = convert_to_tensor(image) if uint16 else convert_to_tensor(image, dtype=uint8)
    return _op(image.graph, "EncodePng", [image], compression=int(compression))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """``tf.image.encode_jpeg`` (TensorFlow's ``EncodeJpeg``): a 3-D uint8
    image with 1 or 3 channels as the bytes of a JPEG, libjpeg set up as
    TensorFlow sets it up (libjpeg-turbo's defaults, then quality,
    progression, chroma subsampling, density, XMP metadata)."""
    from ._graph import _op

    if format not in ("", "grayscale", "rgb"):
        raise ValueError(f"Attr 'format' of 'EncodeJpeg' Op passed string '{format}' not in: "
                         '"", "grayscale", "rgb".')
    if density_unit not in ("in", "cm"):
        raise ValueError(f"Attr 'density_unit' of 'EncodeJpeg' Op passed string '{density_unit}' not in: "
                         '"in", "cm".')
    if not isinstance(image, Tensor):
        image = convert_to_tensor(image, dtype=uint8)
    xmp = xmp_metadata.encode() if isinstance(xmp_metadata, str) else bytes(xmp_metadata)
    return _op(image.graph, "EncodeJpeg", [image], format=format, quality=int(quality),
               progressive=bool(progressive), optimize_size=bool(optimize_size),
               chroma_downsampling=bool(chroma_downsampling), density_unit=density_unit,
               x_density=int(x_density), y_density=int(y_density), xmp_metadata=xmp)


def _pair_attr(values):
    """A two-float attribute; another length becomes an invalid pair, so
    that the op fails when run, as TensorFlow's kernel does."""
    values = [float(v) for v in values]
    return values if len(values) == 2 else [0.0, 0.0]


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """``tf.image.sample_distorted_bounding_box`` (TensorFlow's
    ``SampleDistortedBoundingBoxV2``): ``(begin, size, bboxes)`` of a random
    crop covering at least ``min_object_covered`` of some box, drawn on
    each run (feedstock's own random numbers). Shapes and dtypes are
    TensorFlow's; bad boxes and settings fail when run
    (InvalidArgumentError), as there."""
    size = convert_to_tensor(image_size)
    g = size.graph
    with g.as_default():
        boxes = convert_to_tensor(bounding_boxes, dtype=float32)
        covered = convert_to_tensor(min_object_covered, dtype=float32)
    attempts = 100 if max_attempts is None else int(max_attempts)
    # Named as TensorFlow's: sample_distorted_bounding_box/
    # SampleDistortedBoundingBoxV2 (name=n: n/n).
    scope = _scope(g, name, "sample_distorted_bounding_box")
    with _next_name(g, f"{scope}/{name or 'SampleDistortedBoundingBoxV2'}", exact=True):
        outs = _ops(g, "SampleBox", [size, boxes, covered],
                    aspect_ratio_range=_pair_attr([0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range),
                    area_range=_pair_attr([0.05, 1.0] if area_range is None else area_range),
                    max_attempts=max(attempts, 0),
                    use_image_if_no_bounding_boxes=bool(use_image_if_no_bounding_boxes),
                    seed=_random_seed(g, seed))
    return SampleDistortedBoundingBoxV2(*outs)


# What sample_distorted_bounding_box returns, as TensorFlow's op wrapper
# returns it (``result.begin``; unpacking works too).
SampleDistortedBoundingBoxV2 = collections.namedtuple("SampleDistortedBoundingBoxV2", ["begin", "size", "bboxes"])


_RGB_WEIGHTS = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images, name=None):
    """``tf.image.rgb_to_grayscale``: ``r·0.2989 + g·0.5870 + b·0.1140``
    in float32 (summed in that order, TensorFlow's bits), converted back
    to the image's dtype (without saturation, as TensorFlow)."""
    from . import _graph

    images = convert_to_tensor(images)
    shape = images.shape._dims
    if shape is not None and (not shape or shape[-1] not in (None, 3)):
        raise ValueError(f"Dimensions must be equal, but are {shape[-1] if shape else 0} and 3 "
                         f"for 'Tensordot/MatMul' with input shapes: {images.shape}, [3].")
    with _name_scope(images.graph, name, "rgb_to_grayscale") as scope:
        flt = convert_image_dtype(images, float32)
        parts = [_graph.multiply(flt[..., k:k + 1], w) for k, w in enumerate(_RGB_WEIGHTS)]
        gray = _graph.add(_graph.add(parts[0], parts[1]), parts[2])
        # The result takes the scope's name, as TensorFlow's.
        return convert_image_dtype(gray, images.dtype, name=f"{scope}/")


def grayscale_to_rgb(images, name=None):
    """``tf.image.grayscale_to_rgb``: the one channel repeated three
    times."""
    from . import _graph

    if not isinstance(images, Tensor):
        # TensorFlow reads the static shape before converting the value.
        images.get_shape()  # the AttributeError TensorFlow raises
    shape = images.shape._dims
    if shape is not None:
        if len(shape) < 2:
            raise ValueError(f"A grayscale image (shape {images.shape}) must be at least two-dimensional.")
        if shape[-1] is not None and shape[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        return _graph.concat([images] * 3, len(shape) - 1)
    raise NotImplementedError("feedstock's grayscale_to_rgb needs the image's rank known when built")


def flip_left_right(image):
    return _image("FlipLeftRight", image, "flip_left_right", "ReverseV2")


def flip_up_down(image):
    return _image("FlipUpDown", image, "flip_up_down", "ReverseV2")


def per_image_standardization(image):
    return _image("PerImageStandardization", image)


def random_flip_left_right(image, seed=None):
    x = convert_to_tensor(image)
    seed = _random_seed(x.graph, seed)
    with _tf_named(x, "random_flip_left_right", "Merge", "add"):
        return _op(x.graph, "RandomFlip", [x], up_down=False, seed=seed)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box`` of an image or a batch of images;
    a negative offset, an empty box, or a box outside the image's known
    size is a ValueError when built, as in TensorFlow. A box given as
    tensors (constant or computed) is checked when run
    (``InvalidArgumentError``, TensorFlow's assertion messages)."""
    x = convert_to_tensor(image)
    box = [v if isinstance(v, Tensor) else operator.index(v)
           for v in (offset_height, offset_width, target_height, target_width)]
    # What TensorFlow can decide from Python ints it refuses when built.
    for name, v in zip(("offset_height", "offset_width"), box):
        if isinstance(v, int) and v < 0:
            raise ValueError(f"{name} must be >= 0.")
    for name, v in zip(("target_height", "target_width"), box[2:]):
        if isinstance(v, int) and v <= 0:
            raise ValueError(f"{name} must be > 0.")
    if all(isinstance(v, int) for v in box):
        oh, ow, th, tw = box
        with _tf_named(x, "crop_to_bounding_box", "Squeeze", "Slice"):
            return _op(x.graph, "CropToBox", [x], offset_height=oh, offset_width=ow, target_height=th,
                       target_width=tw)
    # The rest is checked when run, as TensorFlow's assertions are.
    with x.graph.as_default():
        parts = [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=int32) for v in box]
    with _tf_named(x, "crop_to_bounding_box", "Squeeze", "Slice"):
        return _op(x.graph, "CropToBoxInputs", [x, *parts])


def random_crop(value, size, seed=None, name=None):
    """``tf.image.random_crop``: a random ``size`` crop of ``value``.
    ``size`` is a list of ints or scalar tensors, or an int vector
    tensor; a size known when the graph is built gives a known static
    shape, one computed when run unknown dims."""
    x = convert_to_tensor(value)
    g = x.graph
    sizes = _static_ints(size)
    with _next_name(g, name):
        if sizes is not None:
            return _op(g, "RandomCrop", [x], size=list(sizes), seed=_random_seed(g, seed))
        with g.as_default():
            # As TensorFlow converts it: an int32 vector (another dtype is
            # a ValueError).
            size = convert_to_tensor(size if isinstance(size, Tensor) else stack(list(size)), dtype=int32)
        return _op(g, "RandomCrop", [x, size], size=None, seed=_random_seed(g, seed))


def _static_ints(values):
    """``values`` (a list of ints or scalar tensors, or a vector tensor)
    as a list of ints when all are known while building, else ``None``."""
    if isinstance(values, Tensor):
        if values._const is None:
            return None
        values = values._const
    if isinstance(values, np.ndarray):
        values = values.reshape(-1).tolist()
    out = []
    for v in values:
        if isinstance(v, Tensor):
            if v._const is None:
                return None
            v = v._const
        out.append(int(v))
    return out
