//! TensorFlow's kernels that the graph evaluates and that decode nothing:
//! each computes as TensorFlow's CPU kernel does (the same float order),
//! so its results are TensorFlow's bits. The decoders and the tensor ops
//! the engine also uses stay in [`feedstock::decode`].

pub mod adjust;
pub mod bbox;
pub mod color;
pub mod draw;
pub mod encode;
pub mod expand;
pub mod resize;
pub mod resize_extra;
