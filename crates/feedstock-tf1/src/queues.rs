//! Queues made by hand in a graph, the operations on them, and the queue
//! runners that fill them: TensorFlow 1's `tf.FIFOQueue`,
//! `tf.PaddingFIFOQueue`, `tf.RandomShuffleQueue`, `enqueue`,
//! `enqueue_many`, `close`, `size` and `tf.train.QueueRunner`.
//!
//! A queue node owns a [`Queue`] per session, made on first use like the
//! producers' queues. An enqueue node is run for its effect, by
//! [`Session::run`](super::Session::run) with fed values or by a runner
//! thread; a runner is the library's [`QueueRunner`] over the compiled
//! enqueue nodes, so the end of input travels as it does everywhere
//! else: a thread whose enqueue fails OutOfRange (its input queue is
//! closed and drained) ends, and the last one to end closes the queue.

use std::sync::Arc;

use feedstock::coord::QueueRunner;
use feedstock::error::{Error, Kind, Result};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PaddingFifoQueue, PartialShape, PriorityQueue,
    Queue, QueueSpec, RandomShuffleQueue,
};
use feedstock::tensor::DType;

use super::graph::{
    merge_dim, merge_static, Graph, Node, Op, OutInfo, Output, QueueRef,
    StaticShape,
};

/// What kind of queue [`Graph::queue`] makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueKind {
    /// First in, first out (`tf.FIFOQueue`).
    Fifo,
    /// First in, first out; a batch pads each component to its longest
    /// element (`tf.PaddingFIFOQueue`). Every component needs a shape,
    /// whose dimensions may be unknown.
    PaddingFifo,
    /// Elements leave in random order, at least `min_after_dequeue`
    /// staying behind while the queue is open (`tf.RandomShuffleQueue`).
    RandomShuffle {
        /// Elements the open queue keeps back from dequeues.
        min_after_dequeue: usize,
        /// The shuffle's seed; `None` draws one.
        seed: Option<u64>,
    },
    /// Smallest priority first, equal ones in the order TensorFlow's heap
    /// gives them (`tf.PriorityQueue`): component 0 is the int64 scalar
    /// priority.
    Priority,
}

/// A queue runner defined in a graph; see [`Graph::queue_runner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunnerRef {
    pub(crate) index: usize,
}

/// A queue runner's definition: its queue and one enqueue node per
/// thread.
#[derive(Debug, Clone)]
pub(crate) struct RunnerDef {
    pub(crate) queue: u32,
    pub(crate) ops: Vec<Output>,
    /// The error kinds that end a thread cleanly.
    pub(crate) closed_kinds: Vec<Kind>,
    /// Started by [`Session::start_queue_runners`](super::Session::start_queue_runners)
    /// (`tf.train.add_queue_runner`).
    pub(crate) collected: bool,
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid_argument(msg)
}

/// Why `dequeue_many` cannot stack the elements of a queue made by hand,
/// if it cannot: TensorFlow requires fully defined shapes, except in a
/// padding queue.
pub(crate) fn unstackable(node: &Node, kind: &QueueKind) -> Option<String> {
    let defined = node.outputs.iter().all(|o| {
        o.shape
            .as_ref()
            .is_some_and(|s| s.dims().iter().all(Option::is_some))
    });
    (*kind != QueueKind::PaddingFifo && !defined).then(|| {
        format!(
            "{}: dequeue_many and dequeue_up_to need every component's \
             shape fully defined (give the queue its shapes)",
            node.name
        )
    })
}

impl Graph {
    /// A queue of at most `capacity` elements, each a tuple of
    /// `components` (dtype and static shape, `None` for any shape).
    ///
    /// ```
    /// use std::time::Duration;
    /// use feedstock::coord::Coordinator;
    /// use feedstock_tf1::{Graph, QueueKind, Session};
    /// use feedstock::{DType, Kind, Tensor};
    ///
    /// let g = Graph::new();
    /// let q = g.queue(QueueKind::Fifo, 4, &[(DType::I64, None)], None)?;
    /// let x = g.placeholder(DType::I64, None, None)?;
    /// let put = g.enqueue(q, &[x], false)?;
    /// let close = g.queue_close(q, false)?;
    /// let got = g.dequeue(q)?;
    /// let sess = Session::new(&g);
    /// sess.run(&[put], &[(x, Tensor::scalar(7i64).into())])?;
    /// sess.run(&[close], &[])?;
    /// let v = sess.run(&got, &[])?;
    /// assert_eq!(v[0].dense()?.scalar_value::<i64>()?, 7);
    /// assert_eq!(sess.run(&got, &[]).unwrap_err().kind(), Kind::OutOfRange);
    /// # Ok::<(), feedstock::Error>(())
    /// ```
    ///
    /// # Errors
    /// InvalidArgument for no components, a zero capacity, a shuffle
    /// queue's `min_after_dequeue` not below its capacity, a priority
    /// queue whose first component is not an int64 scalar, a padding
    /// queue's component without a shape, or another queue's shape with
    /// an unknown dimension (as TensorFlow).
    pub fn queue(
        &self,
        kind: QueueKind,
        capacity: usize,
        components: &[(DType, StaticShape)],
        name: Option<&str>,
    ) -> Result<QueueRef> {
        if components.is_empty() {
            return Err(invalid("a queue needs at least one component"));
        }
        if capacity == 0 {
            return Err(invalid("a queue's capacity must be positive"));
        }
        match &kind {
            QueueKind::RandomShuffle {
                min_after_dequeue, ..
            } if *min_after_dequeue >= capacity => {
                return Err(invalid(format!(
                    "min_after_dequeue ({min_after_dequeue}) must be below \
                     the capacity ({capacity})"
                )));
            }
            QueueKind::PaddingFifo
                if components.iter().any(|(_, s)| s.is_none()) =>
            {
                return Err(invalid(
                    "a padding queue needs a shape for every component \
                     (dimensions may be unknown)",
                ));
            }
            QueueKind::Priority
                if components[0].0 != DType::I64
                    || components[0]
                        .1
                        .as_ref()
                        .is_some_and(|s| s.rank() != 0) =>
            {
                return Err(invalid(
                    "a priority queue's first component is its int64 scalar \
                     priority",
                ));
            }
            QueueKind::Fifo
            | QueueKind::RandomShuffle { .. }
            | QueueKind::Priority
                if components.iter().any(|(_, s)| {
                    s.as_ref()
                        .is_some_and(|s| s.dims().iter().any(Option::is_none))
                }) =>
            {
                return Err(invalid(
                    "all shapes must be fully defined (only a padding \
                     queue's may have unknown dimensions)",
                ));
            }
            _ => {}
        }
        let default = match kind {
            QueueKind::Fifo => "fifo_queue",
            QueueKind::PaddingFifo => "padding_fifo_queue",
            QueueKind::RandomShuffle { .. } => "random_shuffle_queue",
            QueueKind::Priority => "priority_queue",
        };
        let outputs = components
            .iter()
            .map(|(dtype, shape)| OutInfo {
                dtype: *dtype,
                sparse: false,
                shape: shape.clone(),
                key: None,
            })
            .collect();
        let outs = self.add(
            name,
            default,
            Op::Queue { kind, capacity },
            vec![],
            outputs,
        )?;
        Ok(QueueRef { node: outs[0].node })
    }

    /// Adds `values` to a queue made by [`Graph::queue`]: one element
    /// (`queue.enqueue`), or with `many` the rows of a batch
    /// (`queue.enqueue_many`). The output, run for its effect, is the
    /// number of elements added.
    ///
    /// # Errors
    /// InvalidArgument for a queue not made by hand, a number of values
    /// other than the queue's components, another dtype, a static shape
    /// the component's rules out, or (with `many`) a scalar or batches
    /// of known, different sizes.
    pub fn enqueue(
        &self,
        queue: QueueRef,
        values: &[Output],
        many: bool,
    ) -> Result<Output> {
        let node = self.made_queue(queue)?;
        if values.len() != node.outputs.len() {
            return Err(invalid(format!(
                "{}: the queue has {} components, {} values were given",
                node.name,
                node.outputs.len(),
                values.len()
            )));
        }
        let mut lead: Option<usize> = None;
        for (i, (v, c)) in values.iter().zip(&node.outputs).enumerate() {
            if v.dtype() != c.dtype || v.is_sparse() {
                let sparse = if v.is_sparse() { "a sparse " } else { "" };
                return Err(invalid(format!(
                    "{}: component {i} is a dense {}, not {sparse}{}",
                    node.name,
                    c.dtype,
                    v.dtype()
                )));
            }
            let Some(dims) = self.shape(*v).map(|s| s.dims().to_vec()) else {
                continue;
            };
            let row = if many {
                let Some((&first, rest)) = dims.split_first() else {
                    return Err(invalid(format!(
                        "{}: enqueue_many needs a batch for component {i}, \
                         not a scalar",
                        node.name
                    )));
                };
                let Some(merged) = merge_dim(lead, first) else {
                    return Err(invalid(format!(
                        "{}: enqueue_many's components have {} and {} rows",
                        node.name,
                        lead.unwrap_or_default(),
                        first.unwrap_or_default()
                    )));
                };
                lead = merged;
                rest.to_vec()
            } else {
                dims
            };
            let got = PartialShape::new(row);
            if let Some(want) = &c.shape {
                if merge_static(&c.shape, &Some(got.clone())).is_none() {
                    return Err(invalid(format!(
                        "{}: component {i} has shape {want}, not {got}",
                        node.name
                    )));
                }
            }
        }
        let out = OutInfo {
            dtype: DType::I32,
            sparse: false,
            shape: Some(PartialShape::new(Vec::new())),
            key: None,
        };
        self.add1(
            None,
            if many { "enqueue_many" } else { "enqueue" },
            Op::Enqueue {
                queue: queue.node,
                many,
            },
            values.to_vec(),
            out,
        )
    }

    /// Closes a queue when run (`queue.close()`): no more elements go in,
    /// and once those in are taken dequeues fail OutOfRange. With
    /// `cancel_pending_enqueues`, enqueues waiting for room fail Cancelled
    /// instead of going in. The output is whether this close was the
    /// first asked for.
    ///
    /// # Errors
    /// InvalidArgument for a queue of another graph.
    pub fn queue_close(
        &self,
        queue: QueueRef,
        cancel_pending_enqueues: bool,
    ) -> Result<Output> {
        let op = Op::QueueClose {
            queue: queue.node,
            cancel: cancel_pending_enqueues,
        };
        self.queue_scalar_op(queue, "close", op, DType::Bool)
    }

    /// The number of elements in a queue, as an int32 scalar
    /// (`queue.size()`).
    ///
    /// # Errors
    /// InvalidArgument for a queue of another graph.
    pub fn queue_size(&self, queue: QueueRef) -> Result<Output> {
        let op = Op::QueueSize { queue: queue.node };
        self.queue_scalar_op(queue, "size", op, DType::I32)
    }

    /// Whether a queue is closed, as a bool scalar (`queue.is_closed()`):
    /// true once a close has taken effect.
    ///
    /// # Errors
    /// InvalidArgument for a queue of another graph.
    pub fn queue_is_closed(&self, queue: QueueRef) -> Result<Output> {
        let op = Op::QueueIsClosed { queue: queue.node };
        self.queue_scalar_op(queue, "is_closed", op, DType::Bool)
    }

    /// A node on a queue made by hand whose output is a scalar.
    fn queue_scalar_op(
        &self,
        queue: QueueRef,
        default_name: &str,
        op: Op,
        dtype: DType,
    ) -> Result<Output> {
        self.queue_node(queue)?;
        let out = OutInfo {
            dtype,
            sparse: false,
            shape: Some(PartialShape::new(Vec::new())),
            key: None,
        };
        self.add1(None, default_name, op, vec![], out)
    }

    /// Defines a queue runner (`tf.train.QueueRunner`): one thread per
    /// enqueue node of `enqueue_ops`, each running its node in a loop.
    /// A thread ends cleanly on an error of `closed_kinds` (OutOfRange
    /// when empty); the last to end closes the queue. Any other error
    /// stops the coordinator with it. Start it with
    /// [`Session::start_queue_runner`](super::Session::start_queue_runner),
    /// or add it to the graph's collection with
    /// [`Graph::add_queue_runner`].
    ///
    /// # Errors
    /// InvalidArgument for no enqueue nodes, or a node that is not an
    /// enqueue to `queue`.
    pub fn queue_runner(
        &self,
        queue: QueueRef,
        enqueue_ops: &[Output],
        closed_kinds: &[Kind],
    ) -> Result<RunnerRef> {
        let node = self.made_queue(queue)?;
        if enqueue_ops.is_empty() {
            return Err(invalid(format!(
                "{}: a queue runner needs at least one enqueue op",
                node.name
            )));
        }
        for op in enqueue_ops {
            let target = self.check_node_kind(
                op.node,
                |op| matches!(op, Op::Enqueue { .. }),
                "enqueue op",
            )?;
            if !matches!(target.op, Op::Enqueue { queue: q, .. } if q == queue.node)
            {
                return Err(invalid(format!(
                    "{}: {} enqueues to another queue",
                    node.name, target.name
                )));
            }
        }
        let closed_kinds = if closed_kinds.is_empty() {
            vec![Kind::OutOfRange]
        } else {
            closed_kinds.to_vec()
        };
        let mut g = self.inner.write();
        g.runners.push(RunnerDef {
            queue: queue.node,
            ops: enqueue_ops.to_vec(),
            closed_kinds,
            collected: false,
        });
        Ok(RunnerRef {
            index: g.runners.len() - 1,
        })
    }

    /// Adds a runner to the ones [`Session::start_queue_runners`]
    /// starts (`tf.train.add_queue_runner`).
    ///
    /// [`Session::start_queue_runners`]: super::Session::start_queue_runners
    ///
    /// # Errors
    /// InvalidArgument for a runner of another graph.
    pub fn add_queue_runner(&self, runner: RunnerRef) -> Result<()> {
        let mut g = self.inner.write();
        match g.runners.get_mut(runner.index) {
            Some(r) => {
                r.collected = true;
                Ok(())
            }
            None => Err(invalid("a queue runner of another graph")),
        }
    }

    /// The runner defined `index`-th.
    pub(crate) fn runner_def(&self, index: usize) -> Option<RunnerDef> {
        self.inner.read().runners.get(index).cloned()
    }

    /// The indices of the runners in the graph's collection: all of
    /// them, or those filling `queue`.
    pub(crate) fn collected_runners(&self, queue: Option<u32>) -> Vec<usize> {
        let g = self.inner.read();
        (0..g.runners.len())
            .filter(|&i| {
                let r = &g.runners[i];
                r.collected && queue.is_none_or(|q| q == r.queue)
            })
            .collect()
    }

    fn made_queue(&self, queue: QueueRef) -> Result<Arc<Node>> {
        self.check_node_kind(
            queue.node,
            |op| matches!(op, Op::Queue { .. }),
            "queue made with Graph::queue",
        )
    }
}

/// Makes a session's queue for a queue node.
pub(crate) fn make_queue(
    node: &Node,
    kind: &QueueKind,
    capacity: usize,
) -> Result<Arc<dyn Queue>> {
    // A priority queue's spec is of the components after its priority.
    let skip = usize::from(*kind == QueueKind::Priority);
    let mut spec = QueueSpec::new();
    for o in &node.outputs[skip..] {
        let mut c = ComponentSpec::new(o.dtype);
        if let Some(s) = &o.shape {
            c = c.shape(s.clone());
        }
        spec = spec.component(c);
    }
    Ok(match kind {
        QueueKind::Fifo => FifoQueue::builder(capacity, spec)
            .name(node.name.clone())
            .build()?,
        QueueKind::PaddingFifo => PaddingFifoQueue::builder(capacity, spec)
            .name(node.name.clone())
            .build()?,
        QueueKind::RandomShuffle {
            min_after_dequeue,
            seed,
        } => {
            let mut b = RandomShuffleQueue::builder(capacity, spec);
            b.name(node.name.clone())
                .min_after_dequeue(*min_after_dequeue);
            if let Some(s) = seed {
                b.seed(*s);
            }
            b.build()?
        }
        QueueKind::Priority => PriorityQueue::builder(capacity, spec)
            .name(node.name.clone())
            .build()?,
    })
}

/// A runner over `queue` whose threads run `ops` (each a closure running
/// one compiled enqueue node).
pub(crate) fn runner(
    queue: Arc<dyn Queue>,
    def: &RunnerDef,
    ops: Vec<Box<dyn FnMut() -> Result<()> + Send>>,
) -> Result<QueueRunner> {
    let mut r = QueueRunner::new(queue);
    for op in ops {
        r.add_op(op);
    }
    r.queue_closed_kinds(def.closed_kinds.iter().copied())
}
