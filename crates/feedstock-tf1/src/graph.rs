//! The graph: nodes, their symbolic outputs, and the builder methods.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;

use feedstock::error::{Error, Result};
use feedstock::input::shard::Shard;
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

mod batching;
mod inputs;
mod options;

pub use options::*;

use super::queues::{QueueKind, RunnerDef};
use crate::op::{
    dense, invalid, known, partial, value_as_shape, Identity, In, OpDef,
};

/// The node id a builder uses for "the node being added".
const SELF: u32 = u32::MAX;

/// A symbolic tensor: output `index` of a node of a [`Graph`].
///
/// A small `Copy` handle; its static dtype travels with it, and its
/// (partially known) static shape is [`Graph::shape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Output {
    /// The node's position in its graph.
    pub(crate) node: u32,
    /// Which output of the node.
    pub(crate) index: u32,
    /// The static dtype.
    pub(crate) dtype: DType,
    /// Whether the value is a sparse tensor.
    pub(crate) sparse: bool,
}

impl Output {
    /// The dtype of the values this output yields.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Whether the output yields sparse tensors (a `VarLenFeature` or
    /// `SparseFeature`, or a batch of them).
    pub fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// The node's id in its graph (ids grow in creation order).
    pub fn node_id(&self) -> usize {
        self.node as usize
    }

    /// Which output of its node this is.
    pub fn index(&self) -> usize {
        self.index as usize
    }
}

/// A queue a producer fills: a filename queue for a reader, or the queue
/// of [`Graph::input_producer`] / [`Graph::range_input_producer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueRef {
    pub(crate) node: u32,
}

/// A record reader, which reads records of the files a [`QueueRef`]
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReaderRef {
    pub(crate) node: u32,
}

/// A variable (TensorFlow's `tf.Variable`, as the preloaded-data pattern
/// uses it): `value` reads it; fetching `initializer` assigns it the value
/// of its initial-value output, evaluated in that run (so a placeholder
/// there must be fed in that run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Variable {
    /// Reads the variable. Reading it before it was initialized is
    /// FailedPrecondition naming it.
    pub value: Output,
    /// Assigns the initial value; its value is the value assigned.
    pub initializer: Output,
}

/// A tensor's static shape: `None` when even the rank is unknown.
pub type StaticShape = Option<PartialShape>;

/// A function of the user's that a [`Graph::call`] node runs: given its
/// inputs' values, it returns one value per output (the engine of
/// `tf.py_func`).
pub type UserFn = dyn Fn(&[Value]) -> Result<Vec<Value>> + Send + Sync;

/// A [`Graph::call`] node's function and the dtypes of its outputs.
pub(crate) struct UserCall {
    pub(crate) f: Arc<UserFn>,
    pub(crate) dtypes: Vec<DType>,
}

impl fmt::Debug for UserCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserCall")
            .field("dtypes", &self.dtypes)
            .finish_non_exhaustive()
    }
}

/// What a node computes.
#[derive(Debug)]
pub(crate) enum Op {
    /// A stateless op defined once in [`crate::op`].
    Def(Arc<dyn OpDef>),
    Constant(Value),
    /// A user's function ([`Graph::call`]).
    Call(UserCall),
    Placeholder,
    Variable,
    /// Sets variable `var` to its input; `init` for the variable's
    /// initializer (not a later `assign`).
    Assign {
        var: u32,
        init: bool,
    },
    MatchFilenames {
        pattern: String,
    },
    StringProducer {
        opts: ProducerOptions,
        list: Option<Vec<String>>,
        shard: Option<ShardOptions>,
    },
    InputProducer {
        opts: ProducerOptions,
    },
    RangeProducer {
        limit: i32,
        opts: ProducerOptions,
    },
    SliceProducer {
        opts: ProducerOptions,
    },
    LimitEpochs {
        n: u64,
    },
    Dequeue {
        queue: u32,
    },
    DequeueMany {
        queue: u32,
        n: usize,
        up_to: bool,
        /// Why the queue's elements cannot be stacked, if they cannot: a
        /// queue made by hand without fully defined shapes fails when
        /// run, as in TensorFlow.
        unstackable: Option<String>,
    },
    Reader(ReaderKind),
    Read {
        reader: u32,
        queue: u32,
    },
    ReadUpTo {
        reader: u32,
        queue: u32,
        n: usize,
    },
    /// A question to a reader or an action on it; input: the state to
    /// restore, for [`ReaderStateOp::RestoreState`].
    ReaderState {
        reader: u32,
        op: ReaderStateOp,
    },
    Batch(Arc<BatchSpec>),
    /// A queue made by hand; its outputs describe its components.
    Queue {
        kind: QueueKind,
        capacity: usize,
    },
    /// Inputs: one element's components, or with `many` a batch of them.
    /// Output: how many elements went in.
    Enqueue {
        queue: u32,
        many: bool,
    },
    /// Output: whether this close was the first one asked for.
    QueueClose {
        queue: u32,
        cancel: bool,
    },
    QueueSize {
        queue: u32,
    },
    QueueIsClosed {
        queue: u32,
    },
}

/// A batching node's settings and inputs, by list.
#[derive(Debug)]
pub(crate) struct BatchSpec {
    pub(crate) opts: BatchOptions,
    /// One tensor list per runner closure (one list: cloned into
    /// `num_threads` threads).
    pub(crate) lists: Vec<Vec<Output>>,
    pub(crate) keep_input: Option<Output>,
    /// Per-component dtype, sparse flag and per-example shape.
    pub(crate) components: Vec<(DType, bool, StaticShape)>,
    pub(crate) name: String,
}

/// Static facts about one output.
#[derive(Debug, Clone)]
pub struct OutInfo {
    /// Its dtype.
    pub dtype: DType,
    /// Whether it is a sparse tensor.
    pub sparse: bool,
    /// Its static shape (of the dense form, for a sparse output).
    pub shape: StaticShape,
    /// The output holding the record key(s) of the values here, named in
    /// decoder errors.
    pub key: Option<Output>,
}

/// One node.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) op: Op,
    pub(crate) inputs: Vec<Output>,
    pub(crate) outputs: Vec<OutInfo>,
    /// Outputs evaluated before the node and not read by it: its control
    /// inputs (`tf.control_dependencies`).
    pub(crate) control: Vec<Output>,
}

impl Node {
    /// Everything a step of the node evaluates first: its inputs, then
    /// its control inputs.
    pub(crate) fn reads(&self) -> impl Iterator<Item = &Output> {
        self.inputs.iter().chain(&self.control)
    }

    /// Whether the node owns state built once per session (a queue, a
    /// reader, a batching stage, a random generator, ...).
    pub(crate) fn is_resource(&self) -> bool {
        if let Op::Def(def) = &self.op {
            return def.seed().is_some();
        }
        matches!(
            self.op,
            Op::MatchFilenames { .. }
                | Op::StringProducer { .. }
                | Op::InputProducer { .. }
                | Op::RangeProducer { .. }
                | Op::SliceProducer { .. }
                | Op::LimitEpochs { .. }
                | Op::Reader(_)
                | Op::Batch(_)
                | Op::Queue { .. }
        )
    }

    /// Whether a step evaluates the node's inputs (false for nodes that
    /// consume them once, when the session builds their state, and for
    /// batching nodes, whose runner threads evaluate them).
    pub(crate) fn steps_inputs(&self) -> bool {
        !matches!(
            self.op,
            Op::MatchFilenames { .. }
                | Op::StringProducer { .. }
                | Op::InputProducer { .. }
                | Op::RangeProducer { .. }
                | Op::SliceProducer { .. }
                | Op::Variable
                | Op::Batch(_)
        )
    }

    /// The resource nodes a step of this node uses besides itself.
    pub(crate) fn uses(&self) -> Vec<u32> {
        match self.op {
            Op::Dequeue { queue } | Op::DequeueMany { queue, .. } => {
                vec![queue]
            }
            Op::Read { reader, queue }
            | Op::ReadUpTo { reader, queue, .. } => {
                vec![reader, queue]
            }
            Op::ReaderState { reader, .. } => vec![reader],
            Op::Assign { var, .. } => vec![var],
            Op::Enqueue { queue, .. }
            | Op::QueueClose { queue, .. }
            | Op::QueueSize { queue }
            | Op::QueueIsClosed { queue } => vec![queue],
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub(crate) nodes: Vec<Arc<Node>>,
    /// TensorFlow's `_names_in_use`: how often each lower-cased name was
    /// asked for; see [`Inner::unique_name`].
    names: HashMap<String, usize>,
    /// The name the next node added takes (see [`Graph::set_next_name`]):
    /// the name, and whether it is already unique (reserved with
    /// [`Graph::unique_name`]).
    next_name: Option<(String, bool)>,
    /// The current name scope (`tf.name_scope`): `""`, or a prefix such
    /// as `input` that the names of new nodes go under (`input/Const`).
    scope: String,
    /// Queue runners defined, in order; see [`Graph::queue_runner`].
    pub(crate) runners: Vec<RunnerDef>,
    /// The control inputs of the nodes added now (see
    /// [`Graph::set_control_inputs`]).
    control: Vec<Output>,
}

impl Inner {
    /// `name` under the current name scope.
    fn scoped(&self, name: &str) -> String {
        if self.scope.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.scope)
        }
    }

    /// A name for a new node, made unique as TensorFlow's
    /// `Graph.unique_name` makes it: names compare case-insensitively;
    /// the `k`-th request for `name` (counting from 0) gets `name_k`, or
    /// the next free `name_j` after it. With `mark` the name is reserved.
    fn unique_name(&mut self, name: &str, mark: bool) -> String {
        let key = name.to_lowercase();
        let mut i = self.names.get(&key).copied().unwrap_or(0);
        if mark {
            self.names.insert(key.clone(), i + 1);
        }
        if i == 0 {
            return name.to_owned();
        }
        let mut k = key.clone();
        while self.names.contains_key(&k) {
            k = format!("{key}_{i}");
            i += 1;
        }
        if mark {
            self.names.insert(k, 1);
        }
        format!("{name}_{}", i - 1)
    }
}

/// A pipeline described as a graph of nodes, TensorFlow 1 style; run it
/// with a [`Session`](super::Session).
///
/// A `Graph` is a shared handle: clones add to the same graph, and a
/// session sees nodes added after it was made. Builder methods take
/// `&self` and check their inputs (dtypes, ranks, known sizes) at once,
/// failing InvalidArgument as TensorFlow's Python layer would.
#[derive(Clone, Default)]
pub struct Graph {
    pub(crate) inner: Arc<RwLock<Inner>>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("nodes", &self.inner.read().nodes.len())
            .finish()
    }
}

/// An invalid argument that is a refused dtype (see
/// [`Error::invalid_dtype`]).
fn invalid_dtype(msg: impl Into<String>) -> Error {
    Error::invalid_dtype(msg)
}

fn with_key(mut info: OutInfo, key: Option<Output>) -> OutInfo {
    info.key = key;
    info
}

/// A fresh `Vec` of the static dims, if the rank is known.
fn dims_of(shape: &StaticShape) -> Option<Vec<Option<usize>>> {
    shape.as_ref().map(|s| s.dims().to_vec())
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.inner.read().nodes.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kinds of the readers that read from queue node `queue`.
    pub(crate) fn readers_of(&self, queue: u32) -> Vec<ReaderKind> {
        let g = self.inner.read();
        let mut kinds = Vec::new();
        for n in &g.nodes {
            let reader = match n.op {
                Op::Read { reader, queue: q }
                | Op::ReadUpTo {
                    reader, queue: q, ..
                } if q == queue => reader,
                _ => continue,
            };
            if let Op::Reader(kind) = &g.nodes[reader as usize].op {
                kinds.push(kind.clone());
            }
        }
        kinds
    }

    pub(crate) fn node(&self, id: u32) -> Arc<Node> {
        Arc::clone(&self.inner.read().nodes[id as usize])
    }

    fn info(&self, o: Output) -> Result<OutInfo> {
        let g = self.inner.read();
        g.nodes
            .get(o.node as usize)
            .and_then(|n| n.outputs.get(o.index as usize))
            .cloned()
            .ok_or_else(|| invalid("output is not of this graph"))
    }

    /// The static shape of `o`: `None` when the rank is unknown, else one
    /// entry per dimension, `None` where the size is unknown. For a
    /// sparse output, the shape of its dense form.
    ///
    /// # Panics
    /// If `o` is not an output of this graph.
    pub fn shape(&self, o: Output) -> StaticShape {
        self.info(o).expect("output of this graph").shape
    }

    /// The name of the node of `o` (unique in the graph).
    ///
    /// # Panics
    /// If `o` is not an output of this graph.
    pub fn name(&self, o: Output) -> String {
        self.node(o.node).name.clone()
    }

    /// A queue's unique name in the graph (`queue.name`): the name asked
    /// for, or the default, with `_1`, `_2`, ... when already taken.
    ///
    /// # Panics
    /// If `q` is not a queue of this graph.
    pub fn queue_name(&self, q: QueueRef) -> String {
        self.node(q.node).name.clone()
    }

    /// The nodes' names and number of outputs, in creation order (what
    /// TensorFlow's `Graph.get_operations` and name look-ups see).
    pub fn node_names(&self) -> Vec<(String, usize)> {
        let g = self.inner.read();
        g.nodes
            .iter()
            .map(|n| (n.name.clone(), n.outputs.len()))
            .collect()
    }

    /// Output `index` of the node named `name`, if there is one
    /// (`graph.get_tensor_by_name("name:index")`).
    pub fn output_by_name(&self, name: &str, index: usize) -> Option<Output> {
        let g = self.inner.read();
        let n = g.nodes.iter().find(|n| n.name == name)?;
        let info = n.outputs.get(index)?;
        Some(Output {
            node: n.id,
            index: u32::try_from(index).ok()?,
            dtype: info.dtype,
            sparse: info.sparse,
        })
    }

    /// Reserves a name made unique as TensorFlow makes the name of a name
    /// scope (`add`, `add_1`, ...; compared case-insensitively) and
    /// returns it: helper nodes go under `<name>/` and the node itself
    /// takes `<name>` exactly (`set_next_name(name, true)`).
    pub fn unique_name(&self, name: &str) -> String {
        let mut g = self.inner.write();
        let full = g.scoped(name);
        g.unique_name(&full, true)
    }

    /// The current name scope (`""` at the top).
    pub fn name_scope(&self) -> String {
        self.inner.read().scope.clone()
    }

    /// Sets the name scope new nodes' names go under (`tf.name_scope`):
    /// a full scope such as `input` or `input/parse` (what
    /// [`Graph::unique_name`] returned), `""` for the top.
    pub fn set_name_scope(&self, scope: &str) {
        self.inner.write().scope = scope.trim_end_matches('/').to_owned();
    }

    /// The name the next node added takes instead of its default (what
    /// the `name=` of TensorFlow's functions gives): made unique unless
    /// `exact` (a name [`Graph::unique_name`] reserved). `None` clears it.
    pub fn set_next_name(&self, name: Option<String>, exact: bool) {
        self.inner.write().next_name = name.map(|n| (n, exact));
    }

    /// Sets the control inputs of the nodes added from now on
    /// (`tf.control_dependencies`): a run evaluates them before any of
    /// those nodes, and the nodes do not read them. Empty to add none.
    ///
    /// # Errors
    /// InvalidArgument for an output not of this graph.
    pub fn set_control_inputs(&self, control: Vec<Output>) -> Result<()> {
        let mut g = self.inner.write();
        if control.iter().any(|o| o.node as usize >= g.nodes.len()) {
            return Err(invalid("a control input is not of this graph"));
        }
        g.control = control;
        Ok(())
    }

    /// Every variable initializer, in creation order (what
    /// `tf.global_variables_initializer()` runs).
    pub fn initializers(&self) -> Vec<Output> {
        let g = self.inner.read();
        g.nodes
            .iter()
            .filter(|n| matches!(n.op, Op::Assign { init: true, .. }))
            .map(|n| Output {
                node: n.id,
                index: 0,
                dtype: n.outputs[0].dtype,
                sparse: n.outputs[0].sparse,
            })
            .collect()
    }

    pub(super) fn add(
        &self,
        name: Option<&str>,
        default_name: &str,
        op: Op,
        inputs: Vec<Output>,
        outputs: Vec<OutInfo>,
    ) -> Result<Vec<Output>> {
        let mut g = self.inner.write();
        for i in &inputs {
            let ok = g
                .nodes
                .get(i.node as usize)
                .is_some_and(|n| (i.index as usize) < n.outputs.len());
            if !ok {
                return Err(invalid(
                    "an input is not an output of this graph",
                ));
            }
        }
        let unique = match g.next_name.take() {
            Some((exact, true)) => exact,
            Some((asked, false)) => {
                let full = g.scoped(&asked);
                g.unique_name(&full, true)
            }
            None => {
                let full = g.scoped(name.unwrap_or(default_name));
                g.unique_name(&full, true)
            }
        };
        let id = u32::try_from(g.nodes.len())
            .map_err(|_| invalid("too many nodes"))?;
        let outs = outputs
            .iter()
            .enumerate()
            .map(|(i, info)| Output {
                node: id,
                index: i as u32,
                dtype: info.dtype,
                sparse: info.sparse,
            })
            .collect();
        let mut outputs = outputs;
        for o in &mut outputs {
            if let Some(k) = &mut o.key {
                if k.node == SELF {
                    k.node = id;
                }
            }
        }
        let control = g.control.clone();
        g.nodes.push(Arc::new(Node {
            id,
            name: unique,
            op,
            inputs,
            outputs,
            control,
        }));
        Ok(outs)
    }

    /// Adds the op `def` reading `inputs`: its [`OpDef::infer`] checks
    /// them and gives the outputs. The node is named by the name set with
    /// [`Graph::set_next_name`], else by the op's type.
    ///
    /// # Errors
    /// What the op's inference refuses; InvalidArgument for an input not
    /// of this graph.
    pub fn op(
        &self,
        def: impl OpDef,
        inputs: &[Output],
    ) -> Result<Vec<Output>> {
        self.op_dyn(Arc::new(def), inputs)
    }

    /// [`Graph::op`] for an op with one output.
    ///
    /// # Errors
    /// As [`Graph::op`].
    pub fn op1(&self, def: impl OpDef, inputs: &[Output]) -> Result<Output> {
        Ok(self.op(def, inputs)?[0])
    }

    /// [`Graph::op`] of an op already made (by [`crate::op::from_attrs`]).
    ///
    /// # Errors
    /// As [`Graph::op`].
    pub fn op_dyn(
        &self,
        def: Arc<dyn OpDef>,
        inputs: &[Output],
    ) -> Result<Vec<Output>> {
        crate::op::check_arity(&*def, inputs.len())?;
        let ins = inputs
            .iter()
            .map(|&o| {
                let g = self.inner.read();
                let node = g.nodes.get(o.node as usize);
                let info = node
                    .and_then(|n| n.outputs.get(o.index as usize))
                    .cloned()
                    .ok_or_else(|| invalid("output is not of this graph"))?;
                let constant = match node.map(|n| &n.op) {
                    Some(Op::Constant(v)) => Some(v.clone()),
                    _ => None,
                };
                Ok(In {
                    output: o,
                    info,
                    constant,
                    as_shape: value_as_shape(&g.nodes, o),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = def.infer(&ins)?;
        let name = def.default_name();
        self.add(None, name, Op::Def(def), inputs.to_vec(), outputs)
    }

    pub(super) fn add1(
        &self,
        name: Option<&str>,
        default_name: &str,
        op: Op,
        inputs: Vec<Output>,
        output: OutInfo,
    ) -> Result<Output> {
        Ok(self.add(name, default_name, op, inputs, vec![output])?[0])
    }

    fn check_dense(&self, o: Output, what: &str) -> Result<OutInfo> {
        let info = self.info(o)?;
        if info.sparse {
            return Err(invalid(format!("{what}: expected a dense tensor")));
        }
        Ok(info)
    }

    pub(super) fn check_node_kind(
        &self,
        id: u32,
        want: fn(&Op) -> bool,
        what: &str,
    ) -> Result<Arc<Node>> {
        let g = self.inner.read();
        match g.nodes.get(id as usize) {
            Some(n) if want(&n.op) => Ok(Arc::clone(n)),
            _ => Err(invalid(format!("not a {what} of this graph"))),
        }
    }

    // ----- tensor ops ------------------------------------------------------

    /// `tf.placeholder_with_default`: `input`'s value unless the output
    /// is fed; its static shape is `shape`, which may be less specific
    /// than `input`'s.
    ///
    /// # Errors
    /// InvalidArgument for a sparse `input` or a `shape` incompatible with
    /// `input`'s.
    pub fn placeholder_with_default(
        &self,
        input: Output,
        shape: StaticShape,
    ) -> Result<Output> {
        let info = self.check_dense(input, "placeholder_with_default")?;
        if merge_static(&info.shape, &shape).is_none() {
            return Err(invalid(format!(
                "placeholder_with_default: shapes {} and {} are incompatible",
                show_static(&info.shape),
                show_static(&shape)
            )));
        }
        self.add1(
            None,
            "PlaceholderWithDefault",
            Op::Def(Arc::new(Identity {})),
            vec![input],
            dense(shape, info.dtype),
        )
    }
}

/// A static shape as TensorFlow prints one (`<unknown>` for an unknown
/// rank).
pub(crate) fn show_static(shape: &StaticShape) -> String {
    shape
        .as_ref()
        .map_or_else(|| "<unknown>".to_owned(), ToString::to_string)
}

pub(super) fn merge_dim(
    a: Option<usize>,
    b: Option<usize>,
) -> Option<Option<usize>> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => None,
        (Some(x), _) | (_, Some(x)) => Some(Some(x)),
        (None, None) => Some(None),
    }
}

/// The most specific shape compatible with both, `None` if they clash.
pub(super) fn merge_static(
    a: &StaticShape,
    b: &StaticShape,
) -> Option<StaticShape> {
    match (dims_of(a), dims_of(b)) {
        (Some(x), Some(y)) => {
            if x.len() != y.len() {
                return None;
            }
            let d = x
                .iter()
                .zip(&y)
                .map(|(p, q)| merge_dim(*p, *q))
                .collect::<Option<Vec<_>>>()?;
            Some(partial(d))
        }
        (Some(_), None) => Some(a.clone()),
        (None, _) => Some(b.clone()),
    }
}
