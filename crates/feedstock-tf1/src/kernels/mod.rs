//! TensorFlow's kernels that the graph evaluates and that decode nothing:
//! each computes as TensorFlow's CPU kernel does (the same float order),
//! so its results are TensorFlow's bits: elementwise arithmetic and
//! casts ([`math`]), reductions, comparisons, gathers and selects
//! ([`reduce`]), and the image kernels. The decoders stay in
//! [`feedstock::decode`]; the tensor transforms the engine's own
//! pipelines also use (slice, transpose, crop, flip, standardize) in
//! [`feedstock::transform`].

pub mod adjust;
pub mod bbox;
pub mod color;
pub mod draw;
pub mod encode;
pub mod expand;
pub mod math;
pub mod reduce;
pub mod resize;
pub mod resize_extra;
