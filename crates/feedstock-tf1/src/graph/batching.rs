//! The graph's batching stages (`tf.train.batch` and its kin).

use super::*;

impl Graph {
    // ----- batching --------------------------------------------------------

    /// A batching stage (`tf.train.batch`, `shuffle_batch`, their `_join`
    /// forms, and with `keep_input` their `maybe_` forms): runner threads
    /// evaluate `lists` (one list: in `num_threads` threads; several: one
    /// thread each, the `_join` form) and enqueue the results; each
    /// output of the returned list is one component, batched.
    ///
    /// Each runner thread evaluates its list once per example (or per
    /// chunk, with `enqueue_many`), every node once per evaluation, as
    /// TensorFlow's enqueue op does. `keep_input` is a bool scalar (or,
    /// with `enqueue_many`, a bool vector) deciding what goes in.
    ///
    /// The outputs' static shapes are TensorFlow's: the batch dim (unknown
    /// with `allow_smaller_final_batch`) then `opts.shapes`' entry, or the
    /// lists' merged static shape; a sparse output's dims are all unknown,
    /// as after TensorFlow's sparse round trip through the queue.
    ///
    /// # Errors
    /// InvalidArgument, as TensorFlow refuses them when building: a zero
    /// batch size or capacity, no lists or an empty one, lists that differ
    /// in length, dtypes or incompatible static shapes, `dynamic_pad`
    /// with shuffling, a capacity not above `min_after_dequeue`, an
    /// `enqueue_many` input of rank 0 or with clashing first dims, a
    /// `shapes` entry per component missing or clashing with its input,
    /// or a `keep_input` that is not a bool of known rank 0 (or 1, with
    /// `enqueue_many`, as long as the examples).
    pub fn batch(
        &self,
        lists: &[Vec<Output>],
        keep_input: Option<Output>,
        opts: BatchOptions,
    ) -> Result<Vec<Output>> {
        check_batch_options(&opts)?;
        let Some(first) = lists.first() else {
            return Err(invalid("batch: needs at least one tensor list"));
        };
        if first.is_empty() {
            return Err(invalid("batch: needs at least one tensor"));
        }
        if lists.iter().any(|l| l.len() != first.len()) {
            return Err(invalid("batch_join: tensor lists differ in length"));
        }
        if let Some(given) = &opts.shapes {
            if given.len() != first.len() {
                return Err(invalid(format!(
                    "batch: {} shapes given for {} components",
                    given.len(),
                    first.len()
                )));
            }
        }
        let keep_len = match keep_input {
            Some(k) => self.check_keep_input(k, opts.enqueue_many)?,
            None => None,
        };
        if opts.enqueue_many {
            for l in lists {
                self.check_examples_per_chunk(l, keep_len)?;
            }
        }
        let components = (0..first.len())
            .map(|k| self.batch_component(lists, k, &opts))
            .collect::<Result<Vec<_>>>()?;
        check_fully_defined(&components, &opts)?;
        let default = if opts.shuffle.is_some() {
            "shuffle_batch"
        } else {
            "batch"
        };
        let lead = if opts.allow_smaller_final_batch {
            None
        } else {
            Some(opts.batch_size)
        };
        let outs = components
            .iter()
            .map(|(dtype, sparse, shape)| OutInfo {
                dtype: *dtype,
                sparse: *sparse,
                shape: dims_of(shape).map(|d| {
                    if *sparse {
                        // TensorFlow's sparse batching goes through a
                        // serialized map that keeps only the rank.
                        PartialShape::new(vec![None; d.len() + 1])
                    } else {
                        let mut v = vec![lead];
                        v.extend(d);
                        PartialShape::new(v)
                    }
                }),
                key: None,
            })
            .collect();
        let mut inputs: Vec<Output> = lists.concat();
        inputs.extend(keep_input);
        let name = opts.name.clone();
        // The node's name is the queue's; reserve it first, so that the
        // next stage of the same name is `batch_1` as in TensorFlow.
        let probe = {
            let mut g = self.inner.write();
            let full = g.scoped(name.as_deref().unwrap_or(default));
            g.unique_name(&full, true)
        };
        let spec = BatchSpec {
            opts,
            lists: lists.to_vec(),
            keep_input,
            components,
            name: probe.clone(),
        };
        // The node takes the probed name exactly (it is already scoped).
        self.inner.write().next_name = Some((probe, true));
        self.add(None, default, Op::Batch(Arc::new(spec)), inputs, outs)
    }

    /// The length of a vector `keep_input` (`Some(None)` if unknown),
    /// `None` for a scalar one.
    pub(crate) fn check_keep_input(
        &self,
        keep: Output,
        enqueue_many: bool,
    ) -> Result<Option<Option<usize>>> {
        let info = self.check_dense(keep, "keep_input")?;
        if info.dtype != DType::Bool {
            return Err(invalid("keep_input must be a bool tensor"));
        }
        let Some(dims) = dims_of(&info.shape) else {
            return Err(invalid(
                "keep_input's rank must be known when the graph is built",
            ));
        };
        match dims.as_slice() {
            [] => Ok(None),
            [n] if enqueue_many => Ok(Some(*n)),
            [_] => Err(invalid(
                "keep_input cannot be a vector when enqueue_many is false",
            )),
            _ => Err(invalid("keep_input must be 0 or 1 dimensions")),
        }
    }

    /// With `enqueue_many`, the first dims of one list's components (and
    /// of a vector `keep_input`) must agree: each is the number of
    /// examples in a chunk.
    pub(crate) fn check_examples_per_chunk(
        &self,
        list: &[Output],
        keep_len: Option<Option<usize>>,
    ) -> Result<()> {
        let mut n = keep_len.flatten();
        for (k, &o) in list.iter().enumerate() {
            let lead = match dims_of(&self.info(o)?.shape) {
                Some(d) if d.is_empty() => {
                    return Err(invalid(format!(
                        "batch: with enqueue_many, component {k} needs a \
                         batch dimension (shape [] must have rank at \
                         least 1)"
                    )))
                }
                Some(d) => d[0],
                None => None,
            };
            n = merge_dim(n, lead).ok_or_else(|| {
                invalid(format!(
                    "batch: with enqueue_many, component {k} has {} \
                     examples where the others (or keep_input) have {}",
                    lead.map_or("?".into(), |d| d.to_string()),
                    n.map_or("?".into(), |d| d.to_string()),
                ))
            })?;
        }
        Ok(())
    }

    /// Component `k` of a batching stage: its dtype, whether it is
    /// sparse, and the static shape of one example: `opts.shapes`' entry,
    /// which every list's input must be compatible with, or else the
    /// lists' shapes merged.
    pub(crate) fn batch_component(
        &self,
        lists: &[Vec<Output>],
        k: usize,
        opts: &BatchOptions,
    ) -> Result<(DType, bool, StaticShape)> {
        let given = opts.shapes.as_ref().map(|s| Some(s[k].clone()));
        let first = self.info(lists[0][k])?;
        let mut merged = given.clone().unwrap_or(None);
        for l in lists {
            let info = self.info(l[k])?;
            if info.dtype != first.dtype || info.sparse != first.sparse {
                return Err(invalid(format!(
                    "batch_join: component {k} differs in dtype"
                )));
            }
            let mut shape = info.shape;
            if opts.enqueue_many {
                // Rank 0 was refused by check_examples_per_chunk.
                shape = dims_of(&shape).and_then(|d| {
                    d.get(1..).and_then(|r| partial(r.to_vec()))
                });
            }
            // With shapes given, TensorFlow checks each input against them
            // (not the inputs against each other).
            // TensorFlow's texts (`merge_with`, `assert_is_compatible_with`).
            let against = given.as_ref().unwrap_or(&merged);
            let m = merge_static(against, &shape).ok_or_else(|| {
                invalid(match &given {
                    None => format!(
                        "Shapes {} and {} are not compatible",
                        python_shape(against),
                        python_shape(&shape)
                    ),
                    Some(g) => format!(
                        "Shapes {} and {} are incompatible",
                        python_shape(&shape),
                        python_shape(g)
                    ),
                })
            })?;
            if given.is_none() {
                merged = m;
            }
        }
        Ok((first.dtype, first.sparse, merged))
    }
}

/// Refuses, as TensorFlow's queue does when building, an example shape
/// with an unknown dimension unless `dynamic_pad` pads it (a component
/// of unknown rank is left to the run). TensorFlow's words: a sparse
/// component is listed as the handle it queues.
fn check_fully_defined(
    components: &[(DType, bool, StaticShape)],
    opts: &BatchOptions,
) -> Result<()> {
    let dense = || components.iter().filter(|c| !c.1).map(|c| &c.2);
    if opts.dynamic_pad
        || dense().any(Option::is_none)
        || dense()
            .flatten()
            .all(|s| s.dims().iter().all(Option::is_some))
    {
        return Ok(());
    }
    let shapes: Vec<String> = components
        .iter()
        .map(|(_, sparse, shape)| {
            let dims: Vec<String> = match (sparse, shape) {
                (true, _) if opts.enqueue_many => vec![],
                (true, _) => vec!["1".to_owned()],
                (false, s) => (dims_of(s).unwrap_or_default().iter())
                    .map(|d| {
                        d.map_or_else(|| "None".to_owned(), |d| d.to_string())
                    })
                    .collect(),
            };
            format!("TensorShape([{}])", dims.join(", "))
        })
        .collect();
    Err(invalid(format!(
        "All shapes must be fully defined: [{}]",
        shapes.join(", ")
    )))
}

/// The checks of a batching stage's options alone.
fn check_batch_options(opts: &BatchOptions) -> Result<()> {
    if opts.batch_size == 0 {
        return Err(invalid("batch: batch_size must be positive"));
    }
    if opts.capacity == 0 || opts.num_threads == 0 {
        return Err(invalid(
            "batch: capacity and num_threads must be positive",
        ));
    }
    if let Some(s) = &opts.shuffle {
        if opts.dynamic_pad {
            return Err(invalid("shuffle_batch has no dynamic_pad"));
        }
        if s.min_after_dequeue >= opts.capacity {
            return Err(invalid(format!(
                "shuffle_batch: capacity {} must exceed min_after_dequeue {}",
                opts.capacity, s.min_after_dequeue
            )));
        }
    }
    Ok(())
}

/// A static shape as TensorFlow's messages print it: `(3,)`, `()`,
/// `(None, 2)`, `<unknown>`.
fn python_shape(shape: &StaticShape) -> String {
    let Some(s) = shape else {
        return "<unknown>".to_owned();
    };
    let dims: Vec<String> = (s.dims().iter())
        .map(|d| d.map_or_else(|| "None".to_owned(), |d| d.to_string()))
        .collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}
