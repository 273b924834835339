"""TensorFlow 1's input API on feedstock: ``import feedstock.compat.v1 as tf``.

The calls of TensorFlow's "Reading data" guide build a description of the
pipeline (a native graph); ``tf.train.start_queue_runners`` runs it in
feedstock's own threads and ``tf.Session().run`` returns numpy arrays.
Nothing per record runs in Python. Errors are ``tf.errors.*`` with
TensorFlow's class names, and carry the file and record.

Where TensorFlow would hang (a run that reads a queue whose runners were
never started) feedstock fails ``FailedPreconditionError``. Where
TensorFlow drops data silently, feedstock is stricter or counts it (see
``Session.stats()``).
"""

# ruff: noqa: F401
import sys as _sys
from .._outside import Namespace as _NS
from .._outside import missing as _missing

from .. import errors
from .. import example as _example
from .. import tfrecord as _tfrecord
from .._array_ops import (
    argmax,
    argmin,
    div_no_nan,
    is_finite,
    is_nan,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    map_fn,
    pad,
    range,  # noqa: A004 (TensorFlow's name)
    reduce_all,
    reduce_any,
    reverse,
    reverse_v2,
    split,
    squared_difference,
    string_join,
    unstack,
)
from .._script_ops import Print, numpy_function, py_func
from .._math_ops import exp, log, log1p, pow, random_normal, reciprocal, rint, rsqrt, sigmoid, sign, tanh, truncated_normal
from .._mask_ops import boolean_mask, sequence_mask, string_to_hash_bucket_fast
from .._text_ops import as_string, reduce_join, regex_replace, string_length, string_split, string_to_number, substr
from .._control_flow import case, cond, while_loop
from .._config import ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata
from .._assert_ops import Assert
from .._dtypes import Dimension, dimension_at_index, dimension_value
from .._mode import disable_eager_execution, disable_v2_behavior, disable_v2_tensorshape, enable_v2_tensorshape
from .._graph import (
    DType,
    Graph,
    GraphKeys,
    Operation,
    RunOptions,
    Session,
    InteractiveSession,
    SparseTensor,
    Tensor,
    TensorShape,
    Variable,
    add,
    as_dtype,
    assign,
    assign_add,
    bool_ as bool,  # noqa: A001 (TensorFlow's name)
    cast,
    concat,
    constant,
    convert_to_tensor,
    divide,
    floor_div,
    floordiv,
    floormod,
    mod,
    truncatediv,
    bfloat16,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    get_default_graph,
    get_default_session,
    global_variables,
    get_collection,
    name_scope,
    device,
    add_to_collection,
    trainable_variables,
    variables_initializer,
    half,
    global_variables_initializer,
    group,
    identity,
    initialize_all_variables,
    initialize_local_variables,
    int8,
    int16,
    int32,
    int64,
    local_variables,
    local_variables_initializer,
    maximum,
    clip_by_value,
    sparse_to_dense,
    set_random_seed,
    minimum,
    multiply,
    negative,
    no_op,
    placeholder,
    placeholder_with_default,
    reset_default_graph,
    reshape,
    slice,  # noqa: A004
    sparse_tensor_to_dense,
    stack,
    string,
    strided_slice,
    subtract,
    to_float,
    to_int32,
    to_int64,
    transpose,
    truediv,
    realdiv,
    div,
    expand_dims,
    assert_equal,
    assert_none_equal,
    assert_less,
    assert_less_equal,
    assert_greater,
    assert_greater_equal,
    assert_positive,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    control_dependencies,
    reduce_sum,
    reduce_prod,
    reduce_max,
    reduce_min,
    reduce_mean,
    equal,
    not_equal,
    less,
    less_equal,
    greater,
    greater_equal,
    one_hot,
    gather,
    tile,
    where,
    zeros_like,
    ones_like,
    random_uniform,
    random_shuffle,
    abs,  # noqa: A004
    square,
    sqrt,
    floor,
    ceil,
    round,  # noqa: A004
    squeeze,
    shape,
    size,
    rank,
    fill,
    ones,
    zeros,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .._graph import Coordinator as _Coordinator
from .._graph import LooperThread as _LooperThread
from .._graph import start_queue_runners as _start_queue_runners
from .._ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    FixedLengthRecordReader,
    IdentityReader,
    ReaderBase,
    SparseFeature,
    TextLineReader,
    TFRecordReader,
    VarLenFeature,
    WholeFileReader,
    decode_csv,
    decode_raw,
    matching_files,
    parse_example,
    parse_single_example,
    parse_single_sequence_example,
    random_crop,
    read_file,
)
from .. import _app
from .. import _hooks
from .. import _monitored
from .._varscope import (
    AUTO_REUSE,
    VariableScope,
    constant_initializer,
    get_variable,
    get_variable_scope,
    ones_initializer,
    variable_scope,
    zeros_initializer,
)
from .. import _gfile as _gf
from .. import _ops
from .. import _summary
from .. import _queues
from .._queues import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
from .._types import SparseTensorValue

newaxis = None
float = float32  # noqa: A001

train = _NS("tf.train",
    Example=_example.Example,
    Features=_example.Features,
    Feature=_example.Feature,
    Int64List=_example.Int64List,
    FloatList=_example.FloatList,
    BytesList=_example.BytesList,
    SequenceExample=_example.SequenceExample,
    FeatureList=_example.FeatureList,
    FeatureLists=_example.FeatureLists,
    Coordinator=_Coordinator,
    LooperThread=_LooperThread,
    start_queue_runners=_start_queue_runners,
    MonitoredSession=_monitored.MonitoredSession,
    MonitoredTrainingSession=_monitored.MonitoredTrainingSession,
    SingularMonitoredSession=_monitored.SingularMonitoredSession,
    ChiefSessionCreator=_monitored.ChiefSessionCreator,
    Scaffold=_monitored.Scaffold,
    Supervisor=_monitored.Supervisor,
    SessionRunHook=_monitored.SessionRunHook,
    SessionRunArgs=_monitored.SessionRunArgs,
    SessionRunContext=_monitored.SessionRunContext,
    SessionRunValues=_monitored.SessionRunValues,
    StopAtStepHook=_hooks.StopAtStepHook,
    NanTensorHook=_hooks.NanTensorHook,
    NanLossDuringTrainingError=_hooks.NanLossDuringTrainingError,
    LoggingTensorHook=_hooks.LoggingTensorHook,
    SecondOrStepTimer=_hooks.SecondOrStepTimer,
    get_global_step=_hooks.get_global_step,
    create_global_step=_hooks.create_global_step,
    get_or_create_global_step=_hooks.get_or_create_global_step,
    global_step=_hooks.global_step,
    QueueRunner=_queues.QueueRunner,
    add_queue_runner=_queues.add_queue_runner,
    queue_runner=_NS("tf.train.queue_runner",
        QueueRunner=_queues.QueueRunner,
        add_queue_runner=_queues.add_queue_runner,
        start_queue_runners=_start_queue_runners,
    ),
    string_input_producer=_ops.string_input_producer,
    match_filenames_once=_ops.match_filenames_once,
    input_producer=_ops.input_producer,
    range_input_producer=_ops.range_input_producer,
    slice_input_producer=_ops.slice_input_producer,
    limit_epochs=_ops.limit_epochs,
    batch=_ops.batch,
    batch_join=_ops.batch_join,
    shuffle_batch=_ops.shuffle_batch,
    shuffle_batch_join=_ops.shuffle_batch_join,
    maybe_batch=_ops.maybe_batch,
    maybe_batch_join=_ops.maybe_batch_join,
    maybe_shuffle_batch=_ops.maybe_shuffle_batch,
    maybe_shuffle_batch_join=_ops.maybe_shuffle_batch_join,
)

app = _NS("tf.app",
    run=_app.run,
    flags=_NS("tf.app.flags",
        FLAGS=_app.FLAGS,
        DEFINE_string=_app.DEFINE_string, DEFINE_integer=_app.DEFINE_integer, DEFINE_float=_app.DEFINE_float,
        DEFINE_boolean=_app.DEFINE_boolean, DEFINE_bool=_app.DEFINE_bool, DEFINE_list=_app.DEFINE_list,
        DEFINE_enum=_app.DEFINE_enum, Error=_app.Error,
    ),
)
flags = app.flags

logging = _NS("tf.logging",
    DEBUG=_app.DEBUG, INFO=_app.INFO, WARN=_app.WARN, ERROR=_app.ERROR, FATAL=_app.FATAL,
    log=_app.log, debug=_app.debug, info=_app.info, warning=_app.warning, warn=_app.warn, error=_app.error,
    fatal=_app.fatal, vlog=_app.vlog, set_verbosity=_app.set_verbosity, get_verbosity=_app.get_verbosity,
    log_every_n=_app.log_every_n, log_first_n=_app.log_first_n,
)

python_io = _NS("tf.python_io",
    TFRecordWriter=_tfrecord.TFRecordWriter,
    TFRecordOptions=_tfrecord.TFRecordOptions,
    TFRecordCompressionType=_tfrecord.TFRecordCompressionType,
    tf_record_iterator=_tfrecord.tf_record_iterator,
)

io = _NS("tf.io",
    TFRecordWriter=_tfrecord.TFRecordWriter,
    TFRecordOptions=_tfrecord.TFRecordOptions,
    TFRecordCompressionType=_tfrecord.TFRecordCompressionType,
    tf_record_iterator=_tfrecord.tf_record_iterator,
    FixedLenFeature=FixedLenFeature,
    VarLenFeature=VarLenFeature,
    SparseFeature=SparseFeature,
    FixedLenSequenceFeature=FixedLenSequenceFeature,
    decode_csv=decode_csv,
    decode_raw=decode_raw,
    parse_example=parse_example,
    parse_single_example=parse_single_example,
    parse_single_sequence_example=parse_single_sequence_example,
    parse_sequence_example=_ops.parse_sequence_example,
    match_filenames_once=_ops.match_filenames_once,
    decode_jpeg=_ops.decode_jpeg,
    decode_png=_ops.decode_png,
    decode_image=_ops.decode_image,
    read_file=read_file,
    matching_files=matching_files,
    gfile=_NS("tf.io.gfile",
        GFile=_gf.GFile, glob=_gf.glob, exists=_gf.exists, isdir=_gf.isdir, listdir=_gf.listdir,
        makedirs=_gf.makedirs, mkdir=_gf.mkdir, remove=_gf.remove, rmtree=_gf.rmtree, rename=_gf.rename,
        copy=_gf.copy, walk=_gf.walk,
    ),
)

gfile = _NS("tf.gfile",
    GFile=_gf.GFile, Open=_gf.Open, Glob=_gf.Glob, Exists=_gf.Exists, IsDirectory=_gf.IsDirectory,
    ListDirectory=_gf.ListDirectory, MakeDirs=_gf.MakeDirs, MkDir=_gf.MkDir, Remove=_gf.Remove,
    DeleteRecursively=_gf.DeleteRecursively, Rename=_gf.Rename, Copy=_gf.Copy, Walk=_gf.Walk,
    FastGFile=_gf.FastGFile,
)

math = _NS("tf.math",
    abs=abs, square=square, sqrt=sqrt, floor=floor, ceil=ceil, round=round, rint=rint, pow=pow, equal=equal,
    not_equal=not_equal,
    less=less, less_equal=less_equal, greater=greater, greater_equal=greater_equal, reduce_sum=reduce_sum,
    reduce_mean=reduce_mean, reduce_max=reduce_max, reduce_min=reduce_min, reduce_prod=reduce_prod,
    exp=exp, log=log, log1p=log1p, sigmoid=sigmoid, tanh=tanh, reciprocal=reciprocal, rsqrt=rsqrt, sign=sign,
)

random = _NS("tf.random", uniform=random_uniform, shuffle=random_shuffle, normal=random_normal,
             truncated_normal=truncated_normal)

strings = _NS("tf.strings", to_number=string_to_number, split=string_split, reduce_join=reduce_join,
              as_string=as_string, to_hash_bucket_fast=string_to_hash_bucket_fast, length=string_length, join=string_join,
              substr=substr, regex_replace=regex_replace)

sparse = _NS("tf.sparse", to_dense=sparse_tensor_to_dense, SparseTensor=SparseTensor)

queue = _NS("tf.queue",
    QueueBase=QueueBase,
    FIFOQueue=FIFOQueue,
    PaddingFIFOQueue=PaddingFIFOQueue,
    PriorityQueue=PriorityQueue,
    RandomShuffleQueue=RandomShuffleQueue,
)

image = _NS("tf.image",
    is_jpeg=_ops.is_jpeg,
    decode_jpeg=_ops.decode_jpeg,
    decode_png=_ops.decode_png,
    decode_image=_ops.decode_image,
    flip_left_right=_ops.flip_left_right,
    flip_up_down=_ops.flip_up_down,
    random_flip_left_right=_ops.random_flip_left_right,
    crop_to_bounding_box=_ops.crop_to_bounding_box,
    per_image_standardization=_ops.per_image_standardization,
    random_crop=random_crop,
    convert_image_dtype=_ops.convert_image_dtype,
    adjust_brightness=_ops.adjust_brightness,
    random_brightness=_ops.random_brightness,
    adjust_contrast=_ops.adjust_contrast,
    random_contrast=_ops.random_contrast,
    pad_to_bounding_box=_ops.pad_to_bounding_box,
    resize_image_with_crop_or_pad=_ops.resize_image_with_crop_or_pad,
    resize_with_crop_or_pad=_ops.resize_image_with_crop_or_pad,
    central_crop=_ops.central_crop,
    random_flip_up_down=_ops.random_flip_up_down,
    rgb_to_grayscale=_ops.rgb_to_grayscale,
    grayscale_to_rgb=_ops.grayscale_to_rgb,
    adjust_hue=_ops.adjust_hue,
    adjust_saturation=_ops.adjust_saturation,
    random_hue=_ops.random_hue,
    random_saturation=_ops.random_saturation,
    sample_distorted_bounding_box=_ops.sample_distorted_bounding_box,
    decode_and_crop_jpeg=_ops.decode_and_crop_jpeg,
    extract_jpeg_shape=_ops.extract_jpeg_shape,
    rot90=_ops.rot90,
    transpose_image=_ops.transpose_image,
    transpose=_ops.transpose_image,
    ResizeMethod=_ops.ResizeMethod,
    resize_images=_ops.resize_images,
    resize=_ops.resize_images,
    resize_bilinear=_ops.resize_bilinear,
    resize_nearest_neighbor=_ops.resize_nearest_neighbor,
    resize_bicubic=_ops.resize_bicubic,
    resize_area=_ops.resize_area,
    rgb_to_hsv=_ops.rgb_to_hsv,
    hsv_to_rgb=_ops.hsv_to_rgb,
    adjust_gamma=_ops.adjust_gamma,
    draw_bounding_boxes=_ops.draw_bounding_boxes,
    encode_png=_ops.encode_png,
    encode_jpeg=_ops.encode_jpeg,
)


summary = _NS("tf.summary", merge_all=_summary.merge_all, merge=_summary.merge, scalar=_summary.scalar,
              image=_summary.image, histogram=_summary.histogram, FileWriter=_summary.FileWriter,
              FileWriterCache=_summary.FileWriterCache)


def get_collection(key, scope=None):
    """``tf.get_collection``: the default graph's collection ``key``."""
    return get_default_graph().get_collection(key, scope)


def add_to_collection(name, value):
    """``tf.add_to_collection``: adds ``value`` to the default graph's
    collection ``name``."""
    get_default_graph().add_to_collection(name, value)
dtypes = _NS("tf.dtypes",
    float32=float32, float64=float64, int8=int8, int16=int16, int32=int32, int64=int64, uint8=uint8,
    uint16=uint16, uint32=uint32, uint64=uint64, bool=bool, string=string, as_dtype=as_dtype, DType=DType,
    float16=float16, half=half, bfloat16=bfloat16, complex64=complex64, complex128=complex128,
)


def _text_of(value, convert, encoding):
    if isinstance(value, (bytes, bytearray, str)):
        return convert(value, encoding)
    raise TypeError(f"Expected binary or unicode string, got {value!r}")


def _as_bytes(bytes_or_text, encoding="utf-8"):
    """``tf.compat.as_bytes``: ``str`` encoded, bytes as they are."""
    return _text_of(bytes_or_text, lambda v, e: v.encode(e) if isinstance(v, str) else bytes(v), encoding)


def _as_text(bytes_or_text, encoding="utf-8"):
    """``tf.compat.as_text`` (``as_str``): bytes decoded, ``str`` as it is."""
    return _text_of(bytes_or_text, lambda v, e: v if isinstance(v, str) else bytes(v).decode(e), encoding)


def _as_str_any(value, encoding="utf-8"):
    """``tf.compat.as_str_any``: bytes decoded, anything else ``str()``."""
    return _as_text(value, encoding) if isinstance(value, (bytes, bytearray)) else str(value)


# ``tf.compat``: the text helpers TF1 programs use, and ``tf.compat.v1``,
# this module itself (``tf.compat.v1.Session``).
compat = _NS("tf.compat", as_bytes=_as_bytes, as_text=_as_text, as_str=_as_text, as_str_any=_as_str_any,
             v1=_sys.modules[__name__])


def __getattr__(name):
    """A name this module lacks (``tf.nn``, ``tf.layers``, ``tf.keras``,
    ``tf.losses``...): :class:`feedstock.errors.OutsideInputSystemError`,
    an ``AttributeError`` saying what feedstock covers and how to give its
    batches to a model."""
    raise _missing("tf", name, globals(), f"module {__name__!r}")
