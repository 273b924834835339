//! Ops defined once.
//!
//! An op of the graph that holds no state between runs (arithmetic,
//! shapes, decoders, image kernels, random draws from its own generator)
//! is one Rust type implementing [`OpDef`]: its attributes are the type's
//! fields, [`OpDef::arity`] says how many inputs it takes,
//! [`OpDef::infer`] checks them and says what its outputs are when the
//! graph is built, and [`OpDef::run`] is its kernel. The
//! builder adds it with [`Graph::op`](crate::Graph::op), the evaluator
//! runs it through the trait, and the Python binding makes it by name
//! from a dict of attributes through [`from_attrs`], so adding an op is:
//!
//! 1. declare its type with `op!` in the module of its kind (the
//!    attributes), implement [`OpDef`] for it (its arity, inference and
//!    kernel);
//! 2. list it in `registry!` below;
//! 3. in Python, one call `_op(g, "Type", inputs, attr=value, ...)` in
//!    the function that mirrors TensorFlow's signature.
//!
//! Ops that own state for the session's life (queues, readers,
//! producers, variables, batching stages) stay variants of the graph's
//! own op enum: the session builds their resources.

pub mod array;
pub mod attrs;
pub mod control;
pub mod crop;
pub mod decode;
pub mod image;
pub mod image_extra;
pub mod masks;
pub mod math;
pub mod random;
pub mod select;
pub mod shape;
pub mod slice;
pub mod sparse;
pub mod strings;
pub mod text;

use std::borrow::Cow;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

use bytes::Bytes;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};
use parking_lot::{Mutex, MutexGuard};
use rand_chacha::ChaCha8Rng;

pub use crate::graph::OutInfo;
use crate::graph::{Output, StaticShape};
pub use array::*;
pub use attrs::{Attr, Attrs, FromAttr};
pub use control::{CaseCheck, Cond, Done, LoopVar, While};
pub use crop::*;
pub use decode::*;
pub use image::*;
pub use image_extra::*;
pub use masks::*;
pub use math::*;
pub use random::*;
pub use select::*;
pub use shape::*;
pub use slice::*;
pub use sparse::*;
pub use strings::*;
pub use text::*;

/// The op's TensorFlow type name (`OneHot`), given by [`FromAttrs`].
pub trait OpType {
    /// The type name: the registry's key and the default node name.
    fn op_type(&self) -> &'static str;
}

/// An op made from its attributes; `op!` writes this.
pub trait FromAttrs: Sized {
    /// The op's type name.
    const TYPE: &'static str;
    /// The op with the attributes in `a`.
    ///
    /// # Errors
    /// InvalidArgument for a missing or ill-typed attribute.
    fn from_attrs(a: &Attrs) -> Result<Self>;
}

impl<T: FromAttrs> OpType for T {
    fn op_type(&self) -> &'static str {
        T::TYPE
    }
}

/// One stateless op: its build-time inference and its kernel.
pub trait OpDef: OpType + fmt::Debug + Send + Sync + 'static {
    /// How many inputs the op takes. [`Graph::op`](crate::Graph::op)
    /// refuses any other count before [`OpDef::infer`] is called, so
    /// `infer` and `run` index their inputs within it.
    fn arity(&self) -> RangeInclusive<usize>;

    /// Checks the inputs as TensorFlow's Python layer and shape functions
    /// would, and returns the outputs' dtypes, sparseness, static shapes
    /// and record-key sources.
    ///
    /// # Errors
    /// InvalidArgument (or InvalidDtype) for inputs the op refuses.
    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>>;

    /// Computes the outputs from the inputs, pushing them onto `out`.
    ///
    /// # Errors
    /// What the kernel reports; the evaluator adds the node's name and the
    /// record key.
    fn run(&self, args: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()>;

    /// The name its nodes get when none is given: TensorFlow's default
    /// for the op's Python function, else its type.
    fn default_name(&self) -> &'static str {
        self.op_type()
    }

    /// For an op that draws random numbers, its seed (`Some(None)`:
    /// unseeded): the session gives each such node its own generator.
    fn seed(&self) -> Option<Option<u64>> {
        None
    }

    /// Whether the op only reshapes or forwards input 0, so that the
    /// evaluator may move the value into [`OpDef::forward`] instead of
    /// copying it when no other step reads it.
    fn forwards(&self) -> bool {
        false
    }

    /// The output made from input 0 moved in (`input`), any other
    /// inputs read from `args` (where input 0 is gone); used when
    /// [`OpDef::forwards`] says so.
    ///
    /// # Errors
    /// As [`OpDef::run`].
    fn forward(&self, input: Value, args: &Args<'_, '_>) -> Result<Value> {
        let _ = args;
        Ok(input)
    }

    /// For a control-flow op ([`Cond`], [`While`]), the nodes it runs
    /// only when its predicate says so.
    fn control(&self) -> Option<control::Control> {
        None
    }
}

/// One input of an op being added to the graph.
#[derive(Debug, Clone)]
pub struct In {
    /// The output it is.
    pub output: Output,
    /// What is known of it.
    pub info: OutInfo,
    /// Its value, when it is a constant.
    pub constant: Option<Value>,
    /// What is known of its value read as a shape, for an int32 or int64
    /// vector, as TensorFlow's `constant_value_as_shape` knows it: a
    /// constant's values, the constant scalars of a `tf.stack`, the
    /// static shape `tf.shape(x)` gives, a `tf.concat` of those (a
    /// negative or computed entry unknown); `None` otherwise.
    pub as_shape: StaticShape,
}

impl In {
    /// Its dtype.
    pub fn dtype(&self) -> DType {
        self.info.dtype
    }

    /// Its static dims, if the rank is known.
    pub fn dims(&self) -> Option<Vec<Option<usize>>> {
        self.info.shape.as_ref().map(|s| s.dims().to_vec())
    }

    /// Its static shape.
    pub fn shape(&self) -> &StaticShape {
        &self.info.shape
    }

    /// Its info, checking that it is dense.
    ///
    /// # Errors
    /// InvalidArgument naming `what` for a sparse input.
    pub fn dense(&self, what: &str) -> Result<&OutInfo> {
        if self.info.sparse {
            return Err(Error::invalid_argument(format!(
                "{what}: expected a dense tensor"
            )));
        }
        Ok(&self.info)
    }

    /// The constant dense value, if it is one.
    pub fn constant_tensor(&self) -> Option<&Tensor> {
        self.constant.as_ref().and_then(|v| v.dense().ok())
    }

    /// Its values as dimensions if it is an integer vector constant (a
    /// negative one unknown).
    pub fn constant_dims(&self) -> Option<Vec<Option<usize>>> {
        let t = self.constant_tensor()?;
        let t = t.cast(DType::I64).ok().filter(|t| t.rank() == 1)?;
        let d = t.as_slice::<i64>().ok()?;
        Some(d.iter().map(|&x| usize::try_from(x).ok()).collect())
    }
}

/// What a kernel gets when run: its inputs' values, the record key of
/// the values (for errors) and, for a random op, its generator.
pub struct Args<'s, 'a> {
    ins: &'s dyn Fn(usize) -> &'a Value,
    len: usize,
    key: Option<&'s Value>,
    rng: Option<&'s Mutex<ChaCha8Rng>>,
}

impl fmt::Debug for Args<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Args").field("len", &self.len).finish()
    }
}

impl<'s, 'a> Args<'s, 'a> {
    pub(crate) fn new(
        ins: &'s dyn Fn(usize) -> &'a Value,
        len: usize,
        key: Option<&'s Value>,
        rng: Option<&'s Mutex<ChaCha8Rng>>,
    ) -> Args<'s, 'a> {
        Args { ins, len, key, rng }
    }

    /// The number of inputs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the op has no inputs.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Input `k`'s value.
    pub fn value(&self, k: usize) -> &'a Value {
        (self.ins)(k)
    }

    /// Input `k` as a dense tensor.
    ///
    /// # Errors
    /// InvalidArgument if it is sparse.
    pub fn dense(&self, k: usize) -> Result<&'a Tensor> {
        (self.ins)(k).dense()
    }

    /// The first record key of the values, or `""`: what decoders name in
    /// their errors.
    pub fn key(&self) -> Cow<'s, str> {
        self.key
            .and_then(|v| v.dense().ok())
            .and_then(|t| t.as_slice::<Bytes>().ok())
            .and_then(|s| s.first())
            .map_or(Cow::Borrowed(""), |b| String::from_utf8_lossy(b))
    }

    /// The op's random generator.
    ///
    /// # Errors
    /// Internal for an op whose [`OpDef::seed`] is `None`.
    pub fn rng(&self) -> Result<MutexGuard<'s, ChaCha8Rng>> {
        self.rng
            .map(Mutex::lock)
            .ok_or_else(|| Error::internal("not a random op"))
    }
}

/// Declares an op's type: its fields are its attributes, read by name
/// from [`Attrs`] (`op!(/// doc \n OneHot = "OneHot" { depth: usize,
/// axis: i64 })`).
macro_rules! op {
    (
        $(#[$m:meta])*
        $ty:ident = $name:literal {
            $($(#[$fm:meta])* $field:ident : $fty:ty),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $ty {
            $($(#[$fm])* pub $field: $fty,)*
        }

        impl $crate::op::FromAttrs for $ty {
            const TYPE: &'static str = $name;
            #[allow(unused_variables)]
            fn from_attrs(
                a: &$crate::op::Attrs,
            ) -> feedstock::error::Result<$ty> {
                Ok($ty {
                    $($field: a.get($name, stringify!($field))?,)*
                })
            }
        }
    };
}
pub(crate) use op;

type Ctor = fn(&Attrs) -> Result<Arc<dyn OpDef>>;

fn make<T: OpDef + FromAttrs>(a: &Attrs) -> Result<Arc<dyn OpDef>> {
    Ok(Arc::new(T::from_attrs(a)?))
}

/// Every op the Python binding can make by name: one line per op.
macro_rules! registry {
    ($($ty:ty),* $(,)?) => {
        /// The constructor of the op named `op_type`.
        fn ctor(op_type: &str) -> Option<Ctor> {
            $(
                if op_type == <$ty as FromAttrs>::TYPE {
                    return Some(make::<$ty>);
                }
            )*
            None
        }

        /// Every registered type name.
        pub fn op_types() -> Vec<&'static str> {
            vec![$(<$ty as FromAttrs>::TYPE),*]
        }
    };
}

registry! {
    math::Cast,
    math::Binary,
    math::Neg,
    math::Unary,
    math::Compare,
    array::OneHot,
    select::Select,
    select::WhereTrue,
    select::Reduce,
    select::ArgReduce,
    random::RandomUniform,
    random::RandomNormal,
    random::RandomShuffle,
    sparse::SparsePart,
    sparse::SparseToDense,
    sparse::MakeSparse,
    strings::StringToNumber,
    strings::StringSplit,
    text::StringLength,
    text::Substr,
    text::RegexReplace,
    strings::ReadFile,
    strings::MatchingFiles,
    decode::DecodeRaw,
    decode::DecodeImage,
    image::FlipLeftRight,
    image::FlipUpDown,
    image::PerImageStandardization,
    image::RandomFlip,
    image::Adjust,
    image::Resize,
    image::ExtractJpegShape,
    image::SampleBox,
    crop::PadToBox,
    crop::PadToBoxInputs,
    crop::CropOrPad,
    crop::CropOrPadInputs,
    crop::CentralCrop,
    crop::RandomCrop,
    crop::CropToBox,
    crop::CropToBoxInputs,
    strings::StringToHashBucketFast,
    masks::SequenceMask,
    masks::BooleanMask,
    shape::Reshape,
    shape::Transpose,
    shape::Stack,
    shape::Concat,
    shape::Identity,
    shape::EnsureShape,
    shape::Shape,
    shape::Fill,
    shape::Tile,
    shape::Gather,
    slice::Slice,
    slice::SliceInputs,
    slice::StridedSlice,
    slice::StridedSliceInputs,
    image_extra::ResizeBicubic,
    image_extra::ResizeArea,
    image_extra::RgbToHsv,
    image_extra::HsvToRgb,
    image_extra::AdjustGamma,
    image_extra::DrawBoundingBoxes,
    image_extra::EncodePng,
    image_extra::EncodeJpeg,
    control::Cond,
    control::CaseCheck,
    control::LoopVar,
    control::While,
    control::Done,
}

/// The op `op_type` with attributes `attrs`.
///
/// # Errors
/// InvalidArgument for an unknown op type or a missing or ill-typed
/// attribute.
pub fn from_attrs(op_type: &str, attrs: &Attrs) -> Result<Arc<dyn OpDef>> {
    let ctor = ctor(op_type).ok_or_else(|| {
        Error::invalid_argument(format!("no op of type {op_type}"))
    })?;
    ctor(attrs)
}

/// Checks that `def` takes `n` inputs ([`OpDef::arity`]).
///
/// # Errors
/// InvalidArgument naming the op and the counts.
pub(crate) fn check_arity(def: &dyn OpDef, n: usize) -> Result<()> {
    let arity = def.arity();
    if arity.contains(&n) {
        return Ok(());
    }
    let (lo, hi) = (*arity.start(), *arity.end());
    let takes = match (lo, hi) {
        _ if lo == hi => lo.to_string(),
        (_, usize::MAX) => format!("at least {lo}"),
        _ => format!("{lo} to {hi}"),
    };
    let s = if hi == 1 || lo == 1 && hi == usize::MAX {
        ""
    } else {
        "s"
    };
    Err(invalid(format!(
        "{}: takes {takes} input{s}, got {n}",
        def.op_type()
    )))
}

/// Checks that input `x` of op `op` (its type name) is a dense string
/// tensor; InvalidDtype in TensorFlow's words otherwise.
pub(crate) fn string_op_input<'a>(x: &'a In, op: &str) -> Result<&'a OutInfo> {
    let info = x.dense(op)?;
    if info.dtype != DType::String {
        return Err(Error::invalid_dtype(format!(
            "Input 'input' of '{op}' Op has type {} that does not match \
             expected type of string.",
            info.dtype
        )));
    }
    Ok(info)
}

/// Sizes computed when run (an int32 or int64 vector); a negative one
/// is InvalidArgument.
pub(crate) fn sizes(t: &Tensor) -> Result<Vec<usize>> {
    let v = t.cast(DType::I64)?;
    let v = v.as_slice::<i64>()?;
    v.iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            invalid(format!("the crop size {v:?} holds a negative value"))
        })
}

/// InvalidArgument with `msg`.
pub(crate) fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid_argument(msg)
}

/// A static shape of these known dims.
pub(crate) fn known(dims: &[usize]) -> StaticShape {
    Some(PartialShape::new(
        dims.iter().map(|&d| Some(d)).collect::<Vec<_>>(),
    ))
}

/// A static shape of known rank.
pub(crate) fn partial(dims: Vec<Option<usize>>) -> StaticShape {
    Some(PartialShape::new(dims))
}

/// A dense output with no record key.
pub(crate) fn dense(shape: StaticShape, dtype: DType) -> OutInfo {
    OutInfo {
        dtype,
        sparse: false,
        shape,
        key: None,
    }
}

/// A dense output carrying the record key of `from`.
pub(crate) fn dense_from(
    shape: StaticShape,
    dtype: DType,
    from: &In,
) -> OutInfo {
    OutInfo {
        key: from.info.key,
        ..dense(shape, dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_each_op_once() {
        let mut names = op_types();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a type name is registered twice");
        let e = from_attrs("NoSuchOp", &Attrs::new()).unwrap_err();
        assert!(e.to_string().contains("NoSuchOp"), "{e}");
    }
}
