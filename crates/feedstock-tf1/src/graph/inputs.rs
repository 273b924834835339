//! The graph's inputs: constants, placeholders, variables, producers and
//! readers.

use super::*;

impl Graph {
    // ----- inputs ---------------------------------------------------------

    /// A constant (`tf.constant`).
    ///
    /// # Errors
    /// None today; the `Result` leaves room for checks.
    pub fn constant(&self, value: impl Into<Value>) -> Result<Output> {
        let value = value.into();
        let info = match &value {
            Value::Dense(t) => dense(known(t.dims()), t.dtype()),
            Value::Sparse(s) => OutInfo {
                dtype: s.dtype(),
                sparse: true,
                shape: known(s.dense_shape().dims()),
                key: None,
            },
        };
        self.add1(None, "Const", Op::Constant(value), vec![], info)
    }

    /// A scalar constant of `dtype` holding `x` (what a Python number
    /// becomes next to a tensor of that dtype).
    ///
    /// # Errors
    /// InvalidArgument for a string dtype.
    pub fn scalar(&self, x: f64, dtype: DType) -> Result<Output> {
        if dtype == DType::String {
            return Err(invalid_dtype("a number cannot be a string constant"));
        }
        let t = Tensor::scalar(x).cast(dtype)?;
        self.constant(t)
    }

    /// A node running the user's function `f` on the values of `inputs`
    /// each time it is evaluated (in whichever thread evaluates it: a
    /// runner's, or the one calling [`Session::run`](crate::Session::run)),
    /// with one output per dtype of `dtypes`, of shapes known only when
    /// run. An error `f` returns is the run's error, with its kind.
    ///
    /// # Errors
    /// InvalidArgument for an input of another graph or a sparse input.
    pub fn call(
        &self,
        f: Arc<UserFn>,
        inputs: &[Output],
        dtypes: &[DType],
        name: Option<&str>,
    ) -> Result<Vec<Output>> {
        for &i in inputs {
            self.check_dense(i, "call")?;
        }
        let outputs = dtypes.iter().map(|&d| dense(None, d)).collect();
        let call = UserCall {
            f,
            dtypes: dtypes.to_vec(),
        };
        self.add(name, "PyFunc", Op::Call(call), inputs.to_vec(), outputs)
    }

    /// A value fed to each [`Session::run`](crate::Session::run) that
    /// needs it (`tf.placeholder`). A run that needs it unfed fails
    /// InvalidArgument naming it; a fed value of another dtype or an
    /// incompatible shape is InvalidArgument too.
    ///
    /// # Errors
    /// None today.
    pub fn placeholder(
        &self,
        dtype: DType,
        shape: StaticShape,
        name: Option<&str>,
    ) -> Result<Output> {
        self.add1(
            name,
            "Placeholder",
            Op::Placeholder,
            vec![],
            dense(shape, dtype),
        )
    }

    /// A variable initialized from `initial_value` (`tf.Variable`).
    ///
    /// # Errors
    /// InvalidArgument for a sparse initial value.
    pub fn variable(
        &self,
        initial_value: Output,
        name: Option<&str>,
    ) -> Result<Variable> {
        let info = self.check_dense(initial_value, "variable")?;
        let value = self.add1(
            name,
            "Variable",
            Op::Variable,
            vec![initial_value],
            info.clone(),
        )?;
        // `<variable>/Assign`, whatever the current name scope (the
        // variable's name already has it).
        let assign = format!("{}/Assign", self.name(value));
        {
            let mut g = self.inner.write();
            let assign = g.unique_name(&assign, true);
            g.next_name = Some((assign, true));
        }
        let initializer = self.add1(
            None,
            "Assign",
            Op::Assign {
                var: value.node,
                init: true,
            },
            vec![initial_value],
            info,
        )?;
        Ok(Variable { value, initializer })
    }

    /// Sets variable `var` (its `value` output) to `value` when run
    /// (`Variable.assign`); the output's value is the value assigned.
    ///
    /// # Errors
    /// InvalidArgument when `var` is not a variable of this graph, for a
    /// dtype other than the variable's (a refused dtype) or a shape
    /// incompatible with its static shape.
    pub fn assign(&self, var: Output, value: Output) -> Result<Output> {
        self.check_node_kind(
            var.node,
            |op| matches!(op, Op::Variable),
            "variable",
        )?;
        let want = self.info(var)?;
        let got = self.check_dense(value, "assign")?;
        if got.dtype != want.dtype {
            return Err(invalid_dtype(format!(
                "assign: the variable is {}, the value {}",
                want.dtype, got.dtype
            )));
        }
        if merge_static(&want.shape, &got.shape).is_none() {
            return Err(invalid(format!(
                "assign: shapes {} and {} are incompatible",
                show_static(&want.shape),
                show_static(&got.shape)
            )));
        }
        self.add1(
            None,
            "Assign",
            Op::Assign {
                var: var.node,
                init: false,
            },
            vec![value],
            want,
        )
    }

    /// The files matching a glob pattern, as a rank-1 string tensor,
    /// matched once per session on first use
    /// (`tf.train.match_filenames_once`); sorted.
    ///
    /// # Errors
    /// None at build time; a pattern matching nothing is NotFound when
    /// first evaluated.
    pub fn match_filenames_once(&self, pattern: &str) -> Result<Output> {
        self.add1(
            None,
            "matching_filenames",
            Op::MatchFilenames {
                pattern: pattern.to_owned(),
            },
            vec![],
            dense(partial(vec![None]), DType::String),
        )
    }

    // ----- producers -------------------------------------------------------

    /// A queue of strings (normally filenames), enqueued once per epoch
    /// by a runner thread (`tf.train.string_input_producer`).
    ///
    /// # Errors
    /// InvalidArgument for an empty list, an output that is not a string
    /// vector, or a zero capacity.
    pub fn string_input_producer(
        &self,
        strings: impl Into<Strings>,
        opts: ProducerOptions,
    ) -> Result<QueueRef> {
        self.string_producer(strings.into(), opts, None)
    }

    /// A [`string_input_producer`](Graph::string_input_producer) of this
    /// host's part of the files: see [`ShardOptions`]. The files' record
    /// counts, which even out the hosts, are read when the queue is first
    /// used, by a reader like the one that reads from the queue (a
    /// [`Graph::read`] or [`Graph::read_up_to`] of it must exist by
    /// then).
    ///
    /// # Errors
    /// As [`Graph::string_input_producer`]; InvalidArgument for an index
    /// not below the count, or a shuffle across several hosts with no
    /// seed (each host would draw its own order).
    pub fn sharded_string_input_producer(
        &self,
        strings: impl Into<Strings>,
        opts: ProducerOptions,
        shard: ShardOptions,
    ) -> Result<QueueRef> {
        Shard::new(shard.index, shard.count)?;
        if shard.count > 1 && opts.shuffle && opts.seed.is_none() {
            return Err(invalid(
                "a sharded producer that shuffles needs a seed, the same on \
                 every host",
            ));
        }
        self.string_producer(strings.into(), opts, Some(shard))
    }

    pub(crate) fn string_producer(
        &self,
        strings: Strings,
        opts: ProducerOptions,
        shard: Option<ShardOptions>,
    ) -> Result<QueueRef> {
        check_producer(&opts)?;
        let (list, inputs) = match strings {
            Strings::List(l) => {
                if l.is_empty() {
                    return Err(invalid(
                        "string_input_producer needs at least one string",
                    ));
                }
                (Some(l), vec![])
            }
            Strings::Output(o) => {
                let info = self.check_dense(o, "string_input_producer")?;
                if info.dtype != DType::String
                    || info.shape.as_ref().is_some_and(|s| s.rank() != 1)
                {
                    return Err(invalid(
                        "string_input_producer needs a rank-1 string tensor",
                    ));
                }
                (None, vec![o])
            }
        };
        let name = opts.name.clone();
        let out = self.add1(
            name.as_deref(),
            "input_producer",
            Op::StringProducer { opts, list, shard },
            inputs,
            dense(known(&[]), DType::String),
        )?;
        Ok(QueueRef { node: out.node })
    }

    /// A queue of the rows of `input` (`tf.train.input_producer`); read
    /// it with [`Graph::dequeue`].
    ///
    /// # Errors
    /// InvalidArgument for a scalar or sparse input, or a zero capacity.
    pub fn input_producer(
        &self,
        input: Output,
        opts: ProducerOptions,
    ) -> Result<QueueRef> {
        check_producer(&opts)?;
        let info = self.check_dense(input, "input_producer")?;
        let row = match dims_of(&info.shape) {
            Some(d) if d.is_empty() => {
                return Err(invalid("input_producer needs a rank >= 1 input"))
            }
            Some(d) => partial(d[1..].to_vec()),
            None => None,
        };
        let name = opts.name.clone();
        let out = self.add1(
            name.as_deref(),
            "input_producer",
            Op::InputProducer { opts },
            vec![input],
            dense(row, info.dtype),
        )?;
        Ok(QueueRef { node: out.node })
    }

    /// A queue of the `i32` scalars `0..limit`
    /// (`tf.train.range_input_producer`).
    ///
    /// # Errors
    /// InvalidArgument for a limit that is not positive or a zero
    /// capacity.
    pub fn range_input_producer(
        &self,
        limit: i32,
        opts: ProducerOptions,
    ) -> Result<QueueRef> {
        check_producer(&opts)?;
        if limit <= 0 {
            return Err(invalid(format!(
                "range_input_producer: limit must be positive, got {limit}"
            )));
        }
        let name = opts.name.clone();
        let out = self.add1(
            name.as_deref(),
            "input_producer",
            Op::RangeProducer { limit, opts },
            vec![],
            dense(known(&[]), DType::I32),
        )?;
        Ok(QueueRef { node: out.node })
    }

    /// One row of each of `tensors` at a time, the rows shuffled across
    /// each epoch (`tf.train.slice_input_producer`). The tensors are
    /// evaluated once, when the producer is first used (so variables must
    /// be initialized by then); each step takes the next row.
    ///
    /// # Errors
    /// InvalidArgument for no tensors, a scalar or sparse one, differing
    /// known row counts, or a zero capacity.
    pub fn slice_input_producer(
        &self,
        tensors: &[Output],
        opts: ProducerOptions,
    ) -> Result<Vec<Output>> {
        check_producer(&opts)?;
        if tensors.is_empty() {
            return Err(invalid("slice_input_producer needs a tensor"));
        }
        let mut outs = Vec::new();
        let mut rows: Option<usize> = None;
        for &t in tensors {
            let info = self.check_dense(t, "slice_input_producer")?;
            match dims_of(&info.shape) {
                Some(d) if d.is_empty() => {
                    return Err(invalid(
                        "slice_input_producer needs tensors of rank >= 1",
                    ))
                }
                Some(d) => {
                    if let (Some(r), Some(n)) = (rows, d[0]) {
                        if r != n {
                            return Err(invalid(format!(
                                "slice_input_producer: tensors have {r} and \
                                 {n} rows"
                            )));
                        }
                    }
                    rows = rows.or(d[0]);
                    outs.push(dense(partial(d[1..].to_vec()), info.dtype));
                }
                None => outs.push(dense(None, info.dtype)),
            }
        }
        let name = opts.name.clone();
        self.add(
            name.as_deref(),
            "input_producer",
            Op::SliceProducer { opts },
            tensors.to_vec(),
            outs,
        )
    }

    /// `tensor`, `n` times, then OutOfRange (`tf.train.limit_epochs`).
    ///
    /// # Errors
    /// InvalidArgument for `n == 0`.
    pub fn limit_epochs(&self, tensor: Output, n: u64) -> Result<Output> {
        if n == 0 {
            return Err(invalid("limit_epochs: num_epochs must be positive"));
        }
        let info = self.info(tensor)?;
        self.add1(
            None,
            "limit_epochs",
            Op::LimitEpochs { n },
            vec![tensor],
            info,
        )
    }

    pub(crate) fn queue_node(&self, q: QueueRef) -> Result<Arc<Node>> {
        self.check_node_kind(
            q.node,
            |op| {
                matches!(
                    op,
                    Op::StringProducer { .. }
                        | Op::InputProducer { .. }
                        | Op::RangeProducer { .. }
                        | Op::Queue { .. }
                )
            },
            "queue",
        )
    }

    /// The next element of a queue (`queue.dequeue()`): one output per
    /// component (a producer's queue has one).
    ///
    /// # Errors
    /// InvalidArgument for a queue of another graph.
    pub fn dequeue(&self, queue: QueueRef) -> Result<Vec<Output>> {
        let n = self.queue_node(queue)?;
        self.add(
            None,
            "dequeue",
            Op::Dequeue { queue: queue.node },
            vec![],
            n.outputs.clone(),
        )
    }

    /// The next `n` elements, stacked (`queue.dequeue_many(n)`), or with
    /// `up_to`, between 1 and `n` at the end of input
    /// (`queue.dequeue_up_to(n)`): one output per component.
    ///
    /// # Errors
    /// InvalidArgument for a queue of another graph. Run, it
    /// fails InvalidArgument on a queue made by hand whose components'
    /// shapes are not all fully defined (a padding queue's may have
    /// unknown dimensions), as in TensorFlow.
    pub fn dequeue_many(
        &self,
        queue: QueueRef,
        n: usize,
        up_to: bool,
    ) -> Result<Vec<Output>> {
        let node = self.queue_node(queue)?;
        let unstackable = match &node.op {
            Op::Queue { kind, .. } => crate::queues::unstackable(&node, kind),
            _ => None,
        };
        let lead = if up_to { None } else { Some(n) };
        let outputs = node
            .outputs
            .iter()
            .map(|row| {
                let shape = dims_of(&row.shape).map(|d| {
                    let mut v = vec![lead];
                    v.extend(d);
                    PartialShape::new(v)
                });
                dense(shape, row.dtype)
            })
            .collect();
        self.add(
            None,
            "dequeue_many",
            Op::DequeueMany {
                queue: queue.node,
                n,
                up_to,
                unstackable,
            },
            vec![],
            outputs,
        )
    }

    // ----- readers ---------------------------------------------------------

    /// A record reader of `kind` (`tf.TextLineReader()` and friends).
    ///
    /// # Errors
    /// InvalidArgument for a fixed-length reader with `record_bytes == 0`.
    pub fn reader(&self, kind: ReaderKind) -> Result<ReaderRef> {
        if let ReaderKind::FixedLength {
            record_bytes: 0, ..
        } = kind
        {
            return Err(invalid("record_bytes must be positive"));
        }
        let default = match kind {
            ReaderKind::TextLine { .. } => "TextLineReader",
            ReaderKind::FixedLength { .. } => "FixedLengthRecordReader",
            ReaderKind::TfRecord { .. } => "TFRecordReader",
            ReaderKind::WholeFile => "WholeFileReader",
            ReaderKind::Identity => "IdentityReader",
        };
        let out = self.add1(
            None,
            default,
            Op::Reader(kind),
            vec![],
            dense(known(&[]), DType::String),
        )?;
        Ok(ReaderRef { node: out.node })
    }

    pub(crate) fn reader_node(&self, r: ReaderRef) -> Result<()> {
        self.check_node_kind(
            r.node,
            |op| matches!(op, Op::Reader(_)),
            "reader",
        )
        .map(drop)
    }

    pub(crate) fn work_queue(&self, q: QueueRef) -> Result<()> {
        let n = self.queue_node(q)?;
        if n.outputs[0].dtype != DType::String {
            return Err(invalid_dtype("a reader needs a queue of strings"));
        }
        Ok(())
    }

    /// The next record, as `(key, value)` string scalars
    /// (`reader.read(queue)`); files come from `queue` as needed.
    ///
    /// # Errors
    /// InvalidArgument for a reader or queue of another graph, or a queue
    /// that does not hold strings.
    pub fn read(
        &self,
        reader: ReaderRef,
        queue: QueueRef,
    ) -> Result<(Output, Output)> {
        self.reader_node(reader)?;
        self.work_queue(queue)?;
        // The key is this node's output 0; `add` fills in the id.
        let key = Output {
            node: SELF,
            index: 0,
            dtype: DType::String,
            sparse: false,
        };
        let o = self.add(
            None,
            "ReaderReadV2",
            Op::Read {
                reader: reader.node,
                queue: queue.node,
            },
            vec![],
            vec![
                dense(known(&[]), DType::String),
                with_key(dense(known(&[]), DType::String), Some(key)),
            ],
        )?;
        Ok((o[0], o[1]))
    }

    /// A reader's counters, or an action on it, as `op` says
    /// (`reader.num_records_produced()`, `reset()`, ...). `state` is the
    /// string scalar to restore, for [`ReaderStateOp::RestoreState`] only.
    ///
    /// # Errors
    /// InvalidArgument for a reader of another graph, or a `state` given
    /// or missing against `op`, or not a string scalar.
    pub fn reader_state(
        &self,
        reader: ReaderRef,
        op: ReaderStateOp,
        state: Option<Output>,
    ) -> Result<Output> {
        self.reader_node(reader)?;
        let (name, dtype) = match op {
            ReaderStateOp::NumRecordsProduced => {
                ("ReaderNumRecordsProduced", DType::I64)
            }
            ReaderStateOp::NumWorkUnitsCompleted => {
                ("ReaderNumWorkUnitsCompleted", DType::I64)
            }
            ReaderStateOp::Reset => ("ReaderReset", DType::Bool),
            ReaderStateOp::SerializeState => {
                ("ReaderSerializeState", DType::String)
            }
            ReaderStateOp::RestoreState => ("ReaderRestoreState", DType::Bool),
        };
        let inputs = match (op, state) {
            (ReaderStateOp::RestoreState, Some(s)) => {
                let info = self.info(s)?;
                if s.dtype != DType::String
                    || info.shape.as_ref().is_some_and(|sh| sh.rank() != 0)
                {
                    return Err(invalid(
                        "restore_state takes a string scalar (a state \
                         serialize_state gave)",
                    ));
                }
                vec![s]
            }
            (ReaderStateOp::RestoreState, None) => {
                return Err(invalid(
                    "restore_state needs the state to restore",
                ))
            }
            (_, None) => Vec::new(),
            (_, Some(_)) => {
                return Err(invalid(format!("{name} takes no input")))
            }
        };
        let op = Op::ReaderState {
            reader: reader.node,
            op,
        };
        self.add1(None, name, op, inputs, dense(known(&[]), dtype))
    }

    /// Up to `n` records of one file, as `(keys, values)` string vectors
    /// (`reader.read_up_to(queue, n)`).
    ///
    /// # Errors
    /// As [`Graph::read`]; InvalidArgument for `n == 0`.
    pub fn read_up_to(
        &self,
        reader: ReaderRef,
        queue: QueueRef,
        n: usize,
    ) -> Result<(Output, Output)> {
        if n == 0 {
            return Err(invalid("read_up_to: num_records must be positive"));
        }
        self.reader_node(reader)?;
        self.work_queue(queue)?;
        // The key is this node's output 0; `add` fills in the id.
        let key = Output {
            node: SELF,
            index: 0,
            dtype: DType::String,
            sparse: false,
        };
        let o = self.add(
            None,
            "ReaderReadUpToV2",
            Op::ReadUpTo {
                reader: reader.node,
                queue: queue.node,
                n,
            },
            vec![],
            vec![
                dense(partial(vec![None]), DType::String),
                with_key(dense(partial(vec![None]), DType::String), Some(key)),
            ],
        )?;
        Ok((o[0], o[1]))
    }
}

fn check_producer(opts: &ProducerOptions) -> Result<()> {
    if opts.capacity == 0 {
        return Err(invalid("a producer's capacity must be positive"));
    }
    if opts.num_epochs == Some(0) {
        return Err(invalid("num_epochs must be positive (or None)"));
    }
    Ok(())
}
