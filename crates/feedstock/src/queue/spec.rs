//! What a queue holds: the dtype, kind and (partial) shape of each
//! component of its elements, and the checks every element goes through.

use std::fmt;

use crate::error::{Error, Result};
use crate::tensor::{DType, Shape, Value};

/// A shape whose rank is known but whose dimensions may not be: `None`
/// stands for a dimension of any size.
///
/// Queues use partial shapes to declare their components; a
/// [`PaddingFifoQueue`](super::PaddingFifoQueue) pads the unknown
/// dimensions to the largest size in each batch.
///
/// ```
/// use feedstock::queue::PartialShape;
///
/// let s = PartialShape::new([None, Some(3)]);
/// assert!(s.is_compatible(&[7, 3]));
/// assert!(!s.is_compatible(&[7, 4]));
/// assert!(!s.is_compatible(&[3]));
/// assert_eq!(s.to_string(), "[?, 3]");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PartialShape(Vec<Option<usize>>);

impl PartialShape {
    /// A partial shape from its dimensions (`None` = unknown).
    pub fn new(dims: impl Into<Vec<Option<usize>>>) -> PartialShape {
        PartialShape(dims.into())
    }

    /// The rank-0 shape.
    pub fn scalar() -> PartialShape {
        PartialShape(Vec::new())
    }

    /// The dimensions (`None` = unknown).
    pub fn dims(&self) -> &[Option<usize>] {
        &self.0
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// True when every dimension is known.
    pub fn is_fully_defined(&self) -> bool {
        self.0.iter().all(Option::is_some)
    }

    /// The shape, when every dimension is known.
    pub fn to_shape(&self) -> Option<Shape> {
        self.0
            .iter()
            .copied()
            .collect::<Option<Vec<usize>>>()
            .map(Shape::new)
    }

    /// True when `dims` has this rank and agrees on every known dimension.
    pub fn is_compatible(&self, dims: &[usize]) -> bool {
        self.0.len() == dims.len()
            && self
                .0
                .iter()
                .zip(dims)
                .all(|(p, d)| p.is_none_or(|p| p == *d))
    }
}

impl fmt::Debug for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match d {
                Some(d) => write!(f, "{d}")?,
                None => f.write_str("?")?,
            }
        }
        f.write_str("]")
    }
}

impl From<Shape> for PartialShape {
    fn from(s: Shape) -> PartialShape {
        PartialShape(s.dims().iter().map(|&d| Some(d)).collect())
    }
}

impl From<&Shape> for PartialShape {
    fn from(s: &Shape) -> PartialShape {
        PartialShape(s.dims().iter().map(|&d| Some(d)).collect())
    }
}

impl<const N: usize> From<[usize; N]> for PartialShape {
    fn from(dims: [usize; N]) -> PartialShape {
        PartialShape(dims.iter().map(|&d| Some(d)).collect())
    }
}

impl From<Vec<Option<usize>>> for PartialShape {
    fn from(dims: Vec<Option<usize>>) -> PartialShape {
        PartialShape(dims)
    }
}

/// Whether a component holds dense or sparse tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A [`Tensor`](crate::Tensor).
    Dense,
    /// A [`SparseTensor`](crate::SparseTensor); its shape, when declared,
    /// is checked against the sparse tensor's dense shape.
    Sparse,
}

/// The declaration of one component of a queue's elements.
///
/// ```
/// use feedstock::queue::ComponentSpec;
/// use feedstock::DType;
///
/// let image = ComponentSpec::new(DType::U8).shape([28, 28]).name("image");
/// assert_eq!(image.dtype(), DType::U8);
/// assert_eq!(image.label(0), "image");
/// assert_eq!(ComponentSpec::new(DType::I64).label(1), "component 1");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentSpec {
    /// The element type.
    dtype: DType,
    /// The declared shape; `None` accepts any shape.
    shape: Option<PartialShape>,
    /// Dense or sparse.
    layout: Layout,
    /// A name used in error messages.
    name: Option<String>,
}

impl ComponentSpec {
    /// A dense component of `dtype` and any shape.
    pub fn new(dtype: DType) -> ComponentSpec {
        ComponentSpec {
            dtype,
            shape: None,
            layout: Layout::Dense,
            name: None,
        }
    }

    /// A sparse component of `dtype` and any dense shape.
    pub fn sparse(dtype: DType) -> ComponentSpec {
        ComponentSpec {
            layout: Layout::Sparse,
            ..ComponentSpec::new(dtype)
        }
    }

    /// Declares the shape every value must be compatible with.
    pub fn shape(mut self, shape: impl Into<PartialShape>) -> ComponentSpec {
        self.shape = Some(shape.into());
        self
    }

    /// Names the component (used in error messages).
    pub fn name(mut self, name: impl Into<String>) -> ComponentSpec {
        self.name = Some(name.into());
        self
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The declared shape, if any.
    pub fn partial_shape(&self) -> Option<&PartialShape> {
        self.shape.as_ref()
    }

    /// Dense or sparse.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The declared name, if any.
    pub fn declared_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The name, or `component {index}` when unnamed.
    pub fn label(&self, index: usize) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("component {index}"),
        }
    }

    /// Checks one value against this declaration.
    fn check(&self, index: usize, value: &Value) -> Result<()> {
        match value {
            Value::Dense(t) => {
                self.check_parts(index, true, t.dtype(), t.dims())
            }
            Value::Sparse(s) => {
                self.check_parts(index, false, s.dtype(), s.dims())
            }
        }
    }

    /// Checks a value given by its layout, dtype and dims.
    fn check_parts(
        &self,
        index: usize,
        dense: bool,
        dtype: DType,
        dims: &[usize],
    ) -> Result<()> {
        let what = match (self.layout, dense) {
            (Layout::Dense, false) => {
                Some("expects a dense tensor, got a sparse one".to_owned())
            }
            (Layout::Sparse, true) => {
                Some("expects a sparse tensor, got a dense one".to_owned())
            }
            _ if dtype != self.dtype => {
                Some(format!("expects dtype {}, got {dtype}", self.dtype,))
            }
            _ => match &self.shape {
                Some(s) => (!s.is_compatible(dims)).then(|| {
                    format!("expects shape {s}, got {}", Shape::from(dims))
                }),
                None => None,
            },
        };
        match what {
            None => Ok(()),
            Some(what) => Err(Error::invalid_argument(format!(
                "{} (index {index}) {what}",
                self.label(index)
            ))
            .with_field(self.label(index))),
        }
    }
}

impl From<DType> for ComponentSpec {
    fn from(dtype: DType) -> ComponentSpec {
        ComponentSpec::new(dtype)
    }
}

/// The declaration of a queue's elements: one [`ComponentSpec`] per
/// component. Every enqueued element is checked against it.
///
/// ```
/// use feedstock::queue::{ComponentSpec, QueueSpec};
/// use feedstock::{DType, Kind, Tensor};
///
/// let spec = QueueSpec::new()
///     .component(ComponentSpec::new(DType::F32).shape([2]).name("x"))
///     .component(DType::I64);
/// spec.check(&[Tensor::vector(vec![1f32, 2.0]).into(), Tensor::scalar(3i64).into()])?;
/// let err = spec
///     .check(&[Tensor::vector(vec![1f32]).into(), Tensor::scalar(3i64).into()])
///     .unwrap_err();
/// assert_eq!(err.kind(), Kind::InvalidArgument);
/// assert_eq!(err.field(), Some("x"));
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueSpec {
    /// The components, in order.
    components: Vec<ComponentSpec>,
    /// Set by [`QueueSpec::infer`]: the components are fixed by the
    /// first element enqueued.
    infer: Option<Box<Inference>>,
}

/// What an inferred spec takes from its builder rather than from the
/// first element.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Inference {
    /// Component names.
    names: Option<Vec<String>>,
    /// Per-component shapes replacing the first element's.
    shapes: Option<Vec<PartialShape>>,
}

impl QueueSpec {
    /// A spec with no components yet.
    pub fn new() -> QueueSpec {
        QueueSpec::default()
    }

    /// Dense components of the given dtypes, any shape.
    pub fn dtypes(dtypes: impl IntoIterator<Item = DType>) -> QueueSpec {
        QueueSpec {
            components: dtypes.into_iter().map(ComponentSpec::new).collect(),
            infer: None,
        }
    }

    /// A spec fixed by the first element enqueued, as TensorFlow infers a
    /// queue's dtypes and shapes from the tensors given to it: each
    /// component takes that element's layout, dtype and exact shape (the
    /// shape of one row, for `enqueue_many`), and every later element
    /// must match, as with a declared spec (InvalidArgument naming the
    /// component otherwise). Accepted by [`FifoQueue`](super::FifoQueue)
    /// and [`RandomShuffleQueue`](super::RandomShuffleQueue), and by
    /// [`PaddingFifoQueue`](super::PaddingFifoQueue), where a dense
    /// component takes only the first element's rank, every dimension
    /// being padded; until the first element arrives,
    /// [`Queue::spec`](super::Queue::spec) has no components.
    ///
    /// ```
    /// use feedstock::queue::{FifoQueue, Queue, QueueSpec};
    /// use feedstock::{Kind, Tensor};
    ///
    /// let q = FifoQueue::builder(4, QueueSpec::infer()).build()?;
    /// q.enqueue(vec![Tensor::vector(vec![1i64, 2]).into()])?;
    /// assert_eq!(q.spec().len(), 1);
    /// let e = q.enqueue(vec![Tensor::vector(vec![1.0f32, 2.0]).into()]);
    /// assert_eq!(e.unwrap_err().kind(), Kind::InvalidArgument);
    /// # Ok::<(), feedstock::Error>(())
    /// ```
    pub fn infer() -> QueueSpec {
        QueueSpec {
            components: Vec::new(),
            infer: Some(Box::default()),
        }
    }

    /// An inferred spec whose components get these names and (instead of
    /// the first element's) these shapes.
    pub(crate) fn infer_with(
        names: Option<Vec<String>>,
        shapes: Option<Vec<PartialShape>>,
    ) -> QueueSpec {
        QueueSpec {
            components: Vec::new(),
            infer: Some(Box::new(Inference { names, shapes })),
        }
    }

    /// Whether the spec is to be fixed by the first element
    /// ([`QueueSpec::infer`]).
    pub fn is_inferred(&self) -> bool {
        self.infer.is_some()
    }

    /// The spec an inferred spec becomes for `element`, one value per
    /// component; with `batched`, each value holds a batch along axis 0
    /// and a component takes the shape of one row. With `rank_only` (a
    /// padding queue), a dense component takes the element's rank with
    /// every dimension unknown, so that it is padded.
    ///
    /// # Errors
    /// InvalidArgument for an element with no component, names or shapes
    /// of the wrong number, or (batched) a scalar.
    pub(crate) fn fixed_by(
        &self,
        element: &[Value],
        batched: bool,
        rank_only: bool,
    ) -> Result<QueueSpec> {
        let inference = self.infer.as_deref().cloned().unwrap_or_default();
        let n = element.len();
        if n == 0 {
            return Err(Error::invalid_argument(
                "cannot infer a queue's spec from an element with no \
                 components",
            ));
        }
        for (what, len) in [
            ("names", inference.names.as_ref().map(Vec::len)),
            ("shapes", inference.shapes.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|&len| len != n) {
                return Err(Error::invalid_argument(format!(
                    "{len} {what} for an element of {n} components"
                )));
            }
        }
        let mut out = QueueSpec::new();
        for (i, v) in element.iter().enumerate() {
            let mut c = match v {
                Value::Dense(t) => {
                    let dims = t.dims();
                    let row = if batched {
                        dims.get(1..).ok_or_else(|| {
                            Error::invalid_argument(
                                "enqueue_many needs components with a batch \
                                 axis, got a scalar",
                            )
                            .with_field(i.to_string())
                        })?
                    } else {
                        dims
                    };
                    ComponentSpec::new(t.dtype()).shape(PartialShape::new(
                        row.iter()
                            .map(|&d| (!rank_only).then_some(d))
                            .collect::<Vec<_>>(),
                    ))
                }
                Value::Sparse(sp) => ComponentSpec::sparse(sp.dtype()),
            };
            if let Some(shapes) = &inference.shapes {
                c = c.shape(shapes[i].clone());
            }
            if let Some(names) = &inference.names {
                c = c.name(names[i].clone());
            }
            out = out.component(c);
        }
        Ok(out)
    }

    /// One scalar string component: what a filename queue holds.
    pub fn scalar_string() -> QueueSpec {
        QueueSpec::new().component(
            ComponentSpec::new(DType::String).shape(PartialShape::scalar()),
        )
    }

    /// Appends a component.
    ///
    /// On an [inferred](QueueSpec::infer) spec, makes it a declared one.
    pub fn component(mut self, c: impl Into<ComponentSpec>) -> QueueSpec {
        self.infer = None;
        self.components.push(c.into());
        self
    }

    /// The components.
    pub fn components(&self) -> &[ComponentSpec] {
        &self.components
    }

    /// The number of components.
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// True when there are no components.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// Checks one element (a tuple of components).
    ///
    /// # Errors
    /// InvalidArgument when the number of components differs or a
    /// component has the wrong layout, dtype or shape; the error's field
    /// names the component.
    pub fn check(&self, element: &[Value]) -> Result<()> {
        if element.len() != self.components.len() {
            return Err(Error::invalid_argument(format!(
                "element has {} components, the queue expects {}",
                element.len(),
                self.components.len()
            )));
        }
        for (i, (c, v)) in self.components.iter().zip(element).enumerate() {
            c.check(i, v)?;
        }
        Ok(())
    }

    /// Whether every component is dense with a fully defined shape: then
    /// every element of a checked batch has the same shape, and batching
    /// needs no per-element shape comparison.
    pub(crate) fn is_dense_fully_defined(&self) -> bool {
        self.components.iter().all(|c| {
            c.layout == Layout::Dense
                && c.shape.as_ref().is_some_and(PartialShape::is_fully_defined)
        })
    }

    /// Checks components batched along axis 0 (what `enqueue_many` takes)
    /// as a whole, when every component is dense: each row of a dense
    /// tensor has the dtype and shape of the others, so checking one row
    /// checks them all. Returns the batch size, or `None` (nothing
    /// checked) when a component is not a dense tensor; then
    /// [`QueueSpec::split_batch`] applies.
    ///
    /// # Errors
    /// As [`QueueSpec::split_batch`], with the same messages.
    pub(crate) fn check_dense_batch(
        &self,
        components: &[Value],
    ) -> Result<Option<usize>> {
        if components.len() != self.components.len() {
            return Err(Error::invalid_argument(format!(
                "enqueue_many got {} components, the queue expects {}",
                components.len(),
                self.components.len()
            )));
        }
        let mut n = None;
        for (i, v) in components.iter().enumerate() {
            let Value::Dense(t) = v else {
                return Ok(None);
            };
            let label = self.components[i].label(i);
            let Some(&rows) = t.dims().first() else {
                return Err(Error::invalid_argument(format!(
                    "enqueue_many needs a batch axis, {label} is a scalar"
                ))
                .with_field(label));
            };
            match n {
                None => n = Some(rows),
                Some(n) if n != rows => {
                    return Err(Error::invalid_argument(format!(
                        "enqueue_many: {label} has {rows} rows, component \
                         0 has {n}"
                    ))
                    .with_field(label));
                }
                Some(_) => {}
            }
        }
        let n = n.unwrap_or(0);
        // An empty batch has no element to check (as when split).
        if n > 0 {
            for (i, (c, v)) in
                self.components.iter().zip(components).enumerate()
            {
                if let Value::Dense(t) = v {
                    c.check_parts(i, true, t.dtype(), &t.dims()[1..])?;
                }
            }
        }
        Ok(Some(n))
    }

    /// Splits components batched along axis 0 (what `enqueue_many` takes)
    /// into elements, checking each.
    ///
    /// # Errors
    /// InvalidArgument when the number of components is wrong, a
    /// component is a scalar, the components disagree on the batch size,
    /// or an element fails [`QueueSpec::check`].
    pub fn split_batch(
        &self,
        components: Vec<Value>,
    ) -> Result<Vec<Vec<Value>>> {
        if components.len() != self.components.len() {
            return Err(Error::invalid_argument(format!(
                "enqueue_many got {} components, the queue expects {}",
                components.len(),
                self.components.len()
            )));
        }
        let mut columns: Vec<Vec<Value>> =
            Vec::with_capacity(components.len());
        let mut n = None;
        for (i, v) in components.iter().enumerate() {
            let label = self.components[i].label(i);
            let rows: Vec<Value> = match v {
                Value::Dense(t) => {
                    if t.rank() == 0 {
                        return Err(Error::invalid_argument(format!(
                            "enqueue_many needs a batch axis, {label} is a \
                             scalar"
                        ))
                        .with_field(label));
                    }
                    t.unstack().into_iter().map(Value::Dense).collect()
                }
                Value::Sparse(s) => s
                    .unstack()
                    .map_err(|e| e.with_field(&label))?
                    .into_iter()
                    .map(Value::Sparse)
                    .collect(),
            };
            match n {
                None => n = Some(rows.len()),
                Some(n) if n != rows.len() => {
                    return Err(Error::invalid_argument(format!(
                        "enqueue_many: {label} has {} rows, component 0 has \
                         {n}",
                        rows.len()
                    ))
                    .with_field(label));
                }
                Some(_) => {}
            }
            columns.push(rows);
        }
        let n = n.unwrap_or(0);
        let mut iters: Vec<_> =
            columns.into_iter().map(Vec::into_iter).collect();
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let element: Vec<Value> =
                iters.iter_mut().filter_map(Iterator::next).collect();
            self.check(&element)?;
            out.push(element);
        }
        Ok(out)
    }
}
