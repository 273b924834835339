//! Feeding: the caller supplies the data of each step.
//!
//! The first of the three ways in of TensorFlow's "Reading data" guide.
//! There, a graph declares `tf.placeholder` nodes and each `run` call
//! passes a `feed_dict`; a placeholder that is evaluated without a feed is
//! an error, so a missing input cannot go unnoticed. Here the same contract
//! is three small values:
//!
//! - [`Placeholder`]: one declared input — a name, a [`DType`] and a
//!   [`PartialShape`] whose dimensions may be unknown (`None`), as for a
//!   batch dimension whose size changes from step to step, or no shape
//!   at all ([`Inputs::declare_any_shape`]);
//! - [`Inputs`]: the set of placeholders a step reads, declared once;
//! - [`Feed`]: one step's values, checked against the declarations when
//!   they are set, and read back by the step with [`Feed::get`].
//!
//! Reading an input that was not fed is a [`Kind::FailedPrecondition`]
//! naming the input (never a hang, never a default value); feeding a value
//! of the wrong dtype or shape, or a name that was never declared, is a
//! [`Kind::InvalidArgument`] naming the input.
//!
//! The partial shape is the queues' [`PartialShape`]: a placeholder and a
//! queue component declare shapes the same way.
//!
//! [`Kind::FailedPrecondition`]: crate::Kind::FailedPrecondition
//! [`Kind::InvalidArgument`]: crate::Kind::InvalidArgument
//!
//! ```
//! use feedstock::input::feed::{Feed, Inputs};
//! use feedstock::queue::PartialShape;
//! use feedstock::{DType, Kind, Tensor};
//!
//! let mut inputs = Inputs::new();
//! inputs
//!     .declare("image", DType::F32, PartialShape::new([None, Some(4)]))?
//!     .declare("label", DType::I64, PartialShape::new([None]))?;
//!
//! // One step: the caller builds a batch of two and feeds it.
//! let image = Tensor::new([2, 4], vec![0.5f32; 8])?;
//! let feed = Feed::new(&inputs).set("image", image)?;
//! assert_eq!(feed.get("image")?.dims(), &[2, 4]);
//!
//! // The label was declared but not fed: a clear error, not a hang.
//! let err = feed.get("label").unwrap_err();
//! assert_eq!(err.kind(), Kind::FailedPrecondition);
//! assert_eq!(err.field(), Some("label"));
//! # Ok::<(), feedstock::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::queue::PartialShape;
use crate::tensor::{DType, Tensor};

/// One declared input: a name, a dtype and a partial shape.
///
/// The equivalent of `tf.placeholder(dtype, shape, name)`. It holds no
/// data; a [`Feed`] holds the value of each step. Like a queue's
/// [`ComponentSpec`](crate::queue::ComponentSpec), a placeholder without
/// a shape accepts a tensor of any shape (`tf.placeholder` with
/// `shape=None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// The name the step and the caller use for this input.
    name: String,
    /// The dtype a fed tensor must have.
    dtype: DType,
    /// The shape a fed tensor must be compatible with; `None` accepts any
    /// shape.
    shape: Option<PartialShape>,
}

impl Placeholder {
    /// The input's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The dtype a fed tensor must have.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape a fed tensor must be compatible with, if one was
    /// declared.
    pub fn shape(&self) -> Option<&PartialShape> {
        self.shape.as_ref()
    }

    /// The declared shape as shown in messages: `<any>` when none was
    /// declared.
    fn shape_text(&self) -> String {
        self.shape
            .as_ref()
            .map_or_else(|| "<any>".to_owned(), PartialShape::to_string)
    }

    /// Checks that `value` may be fed to this input.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument), with the
    /// input's name as the field, when the dtype differs or the shape is
    /// not compatible.
    pub fn check(&self, value: &Tensor) -> Result<()> {
        if value.dtype() != self.dtype {
            return Err(Error::invalid_argument(format!(
                "input {:?} expects {} but was fed {}",
                self.name,
                self.dtype,
                value.dtype()
            ))
            .with_field(&self.name));
        }
        if !self
            .shape
            .as_ref()
            .is_none_or(|s| s.is_compatible(value.dims()))
        {
            return Err(Error::invalid_argument(format!(
                "input {:?} expects shape {} but was fed shape {}",
                self.name,
                self.shape_text(),
                value.shape()
            ))
            .with_field(&self.name));
        }
        Ok(())
    }
}

/// The declared inputs of a step, in declaration order.
///
/// Declare them once, then build a [`Feed`] for every step.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    // A step has a handful of inputs, so a vector searched by name is
    // simpler and as fast as a map, and keeps declaration order.
    placeholders: Vec<Placeholder>,
}

impl Inputs {
    /// An empty set of inputs.
    pub fn new() -> Inputs {
        Inputs::default()
    }

    /// Declares an input named `name` that takes tensors of `dtype` whose
    /// shape is compatible with `shape` (`[usize; N]` for a fully known
    /// shape, [`PartialShape::new`] for one with unknown dimensions).
    /// Returns `self` so that declarations chain with `?`.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) when an
    /// input of that name is already declared, or the name is empty.
    pub fn declare(
        &mut self,
        name: impl Into<String>,
        dtype: DType,
        shape: impl Into<PartialShape>,
    ) -> Result<&mut Inputs> {
        self.push(name.into(), dtype, Some(shape.into()))
    }

    /// Declares an input named `name` that takes tensors of `dtype` and
    /// any shape, even any rank.
    ///
    /// # Errors
    ///
    /// As [`Inputs::declare`].
    pub fn declare_any_shape(
        &mut self,
        name: impl Into<String>,
        dtype: DType,
    ) -> Result<&mut Inputs> {
        self.push(name.into(), dtype, None)
    }

    fn push(
        &mut self,
        name: String,
        dtype: DType,
        shape: Option<PartialShape>,
    ) -> Result<&mut Inputs> {
        if name.is_empty() {
            return Err(Error::invalid_argument(
                "an input needs a non-empty name",
            ));
        }
        if self.index(&name).is_some() {
            return Err(Error::invalid_argument(format!(
                "input {name:?} is declared twice"
            ))
            .with_field(&name));
        }
        self.placeholders.push(Placeholder { name, dtype, shape });
        Ok(self)
    }

    /// The declared input named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Placeholder> {
        self.index(name).map(|i| &self.placeholders[i])
    }

    /// The declared inputs, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &Placeholder> {
        self.placeholders.iter()
    }

    /// The number of declared inputs.
    pub fn len(&self) -> usize {
        self.placeholders.len()
    }

    /// True when no input is declared.
    pub fn is_empty(&self) -> bool {
        self.placeholders.is_empty()
    }

    /// An empty feed for one step over these inputs; the same as
    /// [`Feed::new`].
    pub fn feed(&self) -> Feed<'_> {
        Feed::new(self)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.placeholders.iter().position(|p| p.name == name)
    }

    fn undeclared(&self, name: &str) -> Error {
        let declared: Vec<&str> =
            self.placeholders.iter().map(|p| p.name.as_str()).collect();
        Error::invalid_argument(format!(
            "no input named {name:?} is declared (declared: {})",
            if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            }
        ))
        .with_field(name)
    }
}

/// The values of one step: at most one tensor per declared input.
///
/// Values are checked against their [`Placeholder`] when they are set, so a
/// step that reads them with [`Feed::get`] can rely on their dtype and
/// shape. Build a new feed for every step.
#[derive(Debug, Clone)]
pub struct Feed<'a> {
    /// The declarations the values are checked against.
    inputs: &'a Inputs,
    /// One slot per declared input, in declaration order.
    values: Vec<Option<Tensor>>,
}

impl<'a> Feed<'a> {
    /// An empty feed over `inputs`.
    pub fn new(inputs: &'a Inputs) -> Feed<'a> {
        Feed {
            inputs,
            values: vec![None; inputs.len()],
        }
    }

    /// Feeds `value` to the input `name` and returns the feed, so that
    /// calls chain: `Feed::new(&inputs).set("x", x)?.set("y", y)?`.
    ///
    /// # Errors
    ///
    /// As [`Feed::insert`].
    pub fn set(mut self, name: &str, value: Tensor) -> Result<Feed<'a>> {
        self.insert(name, value)?;
        Ok(self)
    }

    /// Feeds `value` to the input `name`.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument), naming the
    /// input as the field, when `name` is not declared, when the value's
    /// dtype or shape does not match the declaration, or when the input
    /// was already fed in this step (TensorFlow's `feed_dict` would keep
    /// one of the two silently; a second value is almost always a bug).
    pub fn insert(&mut self, name: &str, value: Tensor) -> Result<()> {
        let i = self.slot(name)?;
        self.inputs.placeholders[i].check(&value)?;
        if self.values[i].is_some() {
            return Err(Error::invalid_argument(format!(
                "input {name:?} is fed twice in one step"
            ))
            .with_field(name));
        }
        self.values[i] = Some(value);
        Ok(())
    }

    /// The value fed to the input `name`.
    ///
    /// # Errors
    ///
    /// [`Kind::FailedPrecondition`](crate::Kind::FailedPrecondition),
    /// naming the input, when it is declared but was not fed in this
    /// step; [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) when
    /// no input of that name is declared.
    pub fn get(&self, name: &str) -> Result<&Tensor> {
        let i = self.slot(name)?;
        self.values[i].as_ref().ok_or_else(|| self.unfed(i))
    }

    /// Takes the value fed to the input `name` out of the feed, leaving
    /// the input unfed.
    ///
    /// # Errors
    ///
    /// As [`Feed::get`].
    pub fn take(&mut self, name: &str) -> Result<Tensor> {
        let i = self.slot(name)?;
        self.values[i].take().ok_or_else(|| self.unfed(i))
    }

    /// True when the input `name` is declared and fed.
    pub fn is_fed(&self, name: &str) -> bool {
        self.inputs
            .index(name)
            .is_some_and(|i| self.values[i].is_some())
    }

    /// The names of the declared inputs not fed yet, in declaration order.
    pub fn missing(&self) -> impl Iterator<Item = &str> {
        self.inputs
            .placeholders
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| v.is_none())
            .map(|(p, _)| p.name.as_str())
    }

    /// Checks that every declared input is fed, for a step that reads
    /// them all and wants to fail before doing any work.
    ///
    /// # Errors
    ///
    /// [`Kind::FailedPrecondition`](crate::Kind::FailedPrecondition)
    /// listing the inputs not fed; the field is the first of them.
    pub fn require_all(&self) -> Result<()> {
        let missing: Vec<&str> = self.missing().collect();
        match missing.first() {
            None => Ok(()),
            Some(first) => Err(Error::failed_precondition(format!(
                "inputs not fed in this step: {}",
                missing.join(", ")
            ))
            .with_field(first)),
        }
    }

    /// The declarations this feed is checked against.
    pub fn inputs(&self) -> &'a Inputs {
        self.inputs
    }

    /// The slot of the declared input `name`.
    fn slot(&self, name: &str) -> Result<usize> {
        self.inputs
            .index(name)
            .ok_or_else(|| self.inputs.undeclared(name))
    }

    /// The error for reading the declared but unfed input in slot `i`.
    fn unfed(&self, i: usize) -> Error {
        let p = &self.inputs.placeholders[i];
        Error::failed_precondition(format!(
            "input {:?} ({} {}) was read but not fed in this step",
            p.name,
            p.dtype,
            p.shape_text()
        ))
        .with_field(&p.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    fn digits_inputs() -> Inputs {
        let mut inputs = Inputs::new();
        inputs
            .declare("image", DType::F32, PartialShape::new([None, Some(64)]))
            .unwrap()
            .declare("label", DType::I64, PartialShape::new([None]))
            .unwrap();
        inputs
    }

    fn images(n: usize) -> Tensor {
        Tensor::new([n, 64], vec![0.25f32; n * 64]).unwrap()
    }

    #[test]
    fn fed_values_are_read_back_unchanged() {
        let inputs = digits_inputs();
        let labels = Tensor::vector(vec![3i64, 1, 4]);
        let feed = Feed::new(&inputs)
            .set("image", images(3))
            .unwrap()
            .set("label", labels.clone())
            .unwrap();
        assert_eq!(feed.get("image").unwrap(), &images(3));
        assert_eq!(feed.get("label").unwrap(), &labels);
        feed.require_all().unwrap();
    }

    #[test]
    fn unknown_dimension_accepts_any_batch_size() {
        let inputs = digits_inputs();
        for n in [0, 1, 7, 128] {
            let feed = inputs.feed().set("image", images(n)).unwrap();
            assert_eq!(feed.get("image").unwrap().dims(), &[n, 64]);
        }
    }

    #[test]
    fn reading_an_unfed_input_is_failed_precondition_naming_it() {
        let inputs = digits_inputs();
        let feed = Feed::new(&inputs).set("image", images(2)).unwrap();
        let err = feed.get("label").unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert_eq!(err.field(), Some("label"));
        assert!(err.message().contains("int64 [?]"), "{err}");
    }

    #[test]
    fn feeding_wrong_dtype_is_invalid_argument_naming_the_input() {
        let inputs = digits_inputs();
        let err = Feed::new(&inputs)
            .set("label", Tensor::vector(vec![1i32, 2]))
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("label"));
        assert!(err.message().contains("int64"), "{err}");
        assert!(err.message().contains("int32"), "{err}");
    }

    #[test]
    fn feeding_wrong_shape_is_invalid_argument_naming_the_input() {
        let inputs = digits_inputs();
        let wrong_width = Tensor::new([2, 63], vec![0f32; 126]).unwrap();
        let wrong_rank = Tensor::vector(vec![0f32; 64]);
        for value in [wrong_width, wrong_rank] {
            let err = Feed::new(&inputs).set("image", value).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument);
            assert_eq!(err.field(), Some("image"));
            assert!(err.message().contains("[?, 64]"), "{err}");
        }
    }

    #[test]
    fn feeding_an_undeclared_name_is_invalid_argument() {
        let inputs = digits_inputs();
        let err = Feed::new(&inputs).set("pixels", images(1)).unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("pixels"));
        assert!(err.message().contains("image, label"), "{err}");
    }

    #[test]
    fn reading_an_undeclared_name_is_invalid_argument() {
        let inputs = digits_inputs();
        let err = inputs.feed().get("pixels").unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("pixels"));
    }

    #[test]
    fn feeding_an_input_twice_is_invalid_argument() {
        let inputs = digits_inputs();
        let err = Feed::new(&inputs)
            .set("image", images(1))
            .unwrap()
            .set("image", images(2))
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("image"));
    }

    #[test]
    fn a_failed_insert_leaves_the_feed_unchanged() {
        let inputs = digits_inputs();
        let mut feed = inputs.feed();
        assert!(feed.insert("label", Tensor::vector(vec![1u8])).is_err());
        assert!(!feed.is_fed("label"));
        feed.insert("label", Tensor::vector(vec![1i64])).unwrap();
        assert!(feed.is_fed("label"));
    }

    #[test]
    fn declaring_a_name_twice_is_invalid_argument() {
        let mut inputs = digits_inputs();
        let err = inputs.declare("label", DType::I32, [3]).unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("label"));
        assert_eq!(inputs.get("label").unwrap().dtype(), DType::I64);
        assert!(inputs.declare_any_shape("", DType::I32).is_err());
    }

    #[test]
    fn missing_lists_unfed_inputs_in_declaration_order() {
        let inputs = digits_inputs();
        let feed = inputs.feed();
        assert_eq!(feed.missing().collect::<Vec<_>>(), ["image", "label"]);
        let err = feed.require_all().unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert_eq!(err.field(), Some("image"));
        assert!(err.message().contains("image, label"), "{err}");
        let feed = feed.set("label", Tensor::vector(vec![0i64])).unwrap();
        assert_eq!(feed.missing().collect::<Vec<_>>(), ["image"]);
    }

    #[test]
    fn take_moves_the_value_out_and_unfeeds_the_input() {
        let inputs = digits_inputs();
        let mut feed = inputs.feed().set("image", images(2)).unwrap();
        assert_eq!(feed.take("image").unwrap(), images(2));
        assert_eq!(
            feed.get("image").unwrap_err().kind(),
            Kind::FailedPrecondition
        );
        assert_eq!(
            feed.take("image").unwrap_err().kind(),
            Kind::FailedPrecondition
        );
    }

    #[test]
    fn an_input_without_a_shape_accepts_any_rank_but_checks_dtype() {
        let mut inputs = Inputs::new();
        inputs.declare_any_shape("any", DType::String).unwrap();
        assert_eq!(inputs.get("any").unwrap().shape(), None);
        let feed = inputs.feed().set("any", Tensor::string("x")).unwrap();
        assert_eq!(feed.get("any").unwrap().rank(), 0);
        let matrix = Tensor::new([1, 1], vec![bytes::Bytes::from("y")]);
        inputs.feed().set("any", matrix.unwrap()).unwrap();
        let err = inputs.feed().set("any", Tensor::scalar(1f32)).unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        let err = inputs.feed().get("any").unwrap_err();
        assert!(err.message().contains("string <any>"), "{err}");
    }

    #[test]
    fn a_fully_known_shape_accepts_only_that_shape() {
        let mut inputs = Inputs::new();
        inputs.declare("m", DType::F32, [2, 3]).unwrap();
        let ok = Tensor::new([2, 3], vec![0f32; 6]).unwrap();
        inputs.feed().set("m", ok).unwrap();
        for dims in [[3usize, 2], [2, 2]] {
            let n = dims[0] * dims[1];
            let bad = Tensor::new(dims, vec![0f32; n]).unwrap();
            let err = inputs.feed().set("m", bad).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument);
            assert!(err.message().contains("[2, 3]"), "{err}");
        }
    }
}
