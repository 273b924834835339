//! Evaluation: a list of outputs compiled into an ordered list of steps,
//! and the kernels each node runs.
//!
//! ADVICE FOR HACKERS: a compiled list is made once per batching runner
//! (and once per [`Session::run`](super::Session::run)); a runner then
//! evaluates it once per example, reusing its slot vectors, so that a
//! step allocates nothing but the tensors the kernels make. Inputs are
//! read by reference; outputs leave the slots by move.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use feedstock::error::{Error, Kind, Result};
use feedstock::io::fs::default_fs;
use feedstock::queue::{PartialShape, Queue};
use feedstock::reader::{Reader, WorkQueue};
use feedstock::tensor::{DType, Tensor, Value};

use super::graph::{Graph, Node, Op, Output, ReaderStateOp};
use super::session::{Inner, Interrupt, NodeState, Resource};
use crate::control::{self, control_step, Ctl, Item};
use crate::op::{control::truth, Args};

/// Where a step finds an input.
#[derive(Debug, Clone)]
enum Src {
    /// Output `.1` of the step at `.0`.
    Slot(u32, u32),
    /// A constant node's value.
    Const(Arc<Node>),
    /// The fed value at this position.
    Feed(u32),
}

/// One node to run.
struct Step {
    node: Arc<Node>,
    inputs: Vec<Src>,
    /// Where the record key(s) of the node's input are, for errors.
    key: Option<Src>,
    /// The node's own state.
    state: Arc<NodeState>,
    /// The states of the resources the node uses (queue, reader).
    uses: Vec<Arc<NodeState>>,
    /// Input 0 is read by this step alone, so a step that only reshapes
    /// or forwards it may move it instead of copying it.
    movable: bool,
    /// The step's part in a cond, if it has one.
    ctl: Ctl,
    /// For a merge or a loop's next step: which inputs it may move out of
    /// their slots (made for it in this pass, and read by it alone).
    moves: Vec<bool>,
}

impl Step {
    /// A step of a cond's control.
    fn control(node: &Arc<Node>, inputs: Vec<Src>, ctl: Ctl) -> Step {
        Step {
            node: Arc::clone(node),
            inputs,
            key: None,
            state: Arc::new(NodeState::default()),
            uses: Vec::new(),
            movable: false,
            ctl,
            moves: Vec::new(),
        }
    }
}

/// Outputs compiled into steps in dependency order.
pub(crate) struct Compiled {
    steps: Vec<Step>,
    outs: Vec<Src>,
    /// For each output, whether a later output reads the same source (so
    /// this one must be cloned, not moved).
    shared: Vec<bool>,
}

/// What a run supplies.
pub(crate) struct Ctx<'a> {
    pub(crate) feeds: &'a [(Output, Value)],
    pub(crate) deadline: Option<Instant>,
    pub(crate) closed: &'a AtomicBool,
    /// Checked between the slices of each wait.
    pub(crate) interrupt: Option<&'a Interrupt>,
    /// The session's default operation timeout, applied by sliced waits
    /// when the run has no deadline.
    pub(crate) op_timeout: Option<Duration>,
    /// A run of the user's (not a runner thread's): the elements its
    /// steps take from the input are counted (see
    /// [`Session::input_position`](crate::Session::input_position)).
    pub(crate) user: bool,
}

/// Checks a fed value against its output's static dtype and shape.
pub(crate) fn check_feed(graph: &Graph, o: Output, v: &Value) -> Result<()> {
    check_fed(graph, o, graph.shape(o).as_ref(), v)
}

/// [`check_feed`] against `shape`, the output's static shape, known
/// beforehand (a callable's feeds): the node's name is looked up only
/// for an error.
pub(crate) fn check_fed(
    graph: &Graph,
    o: Output,
    shape: Option<&PartialShape>,
    v: &Value,
) -> Result<()> {
    if v.dtype() != o.dtype() {
        return Err(Error::invalid_argument(format!(
            "fed a {} value for {}:{}, which is {}",
            v.dtype(),
            graph.name(o),
            o.index(),
            o.dtype()
        )));
    }
    if let (Value::Dense(t), Some(s)) = (v, shape) {
        if !s.is_compatible(t.dims()) {
            return Err(Error::invalid_argument(format!(
                "fed a value of shape {:?} for {}:{}, which has shape {s}",
                t.dims(),
                graph.name(o),
                o.index()
            )));
        }
    }
    Ok(())
}

/// Compiles `targets` for a session, making the resources the steps use.
pub(crate) fn compile(
    inner: &Arc<Inner>,
    targets: &[Output],
    fed: &[Output],
) -> Result<Compiled> {
    let graph = {
        // A snapshot of the nodes; nodes added later are not needed.
        let g = inner_graph(inner);
        g.inner.read().nodes.clone()
    };
    let feed_of = |o: &Output| fed.iter().position(|f| f == o);
    let fully_fed = |n: &Node| {
        (0..n.outputs.len()).all(|i| {
            fed.iter().any(|f| f.node == n.id && f.index as usize == i)
        })
    };
    // Every step after the steps it reads; a cond's branches laid out
    // to run only when chosen (see `control`).
    let order = control::order(&graph, targets, fed)?;
    let pos: HashMap<u32, u32> = order
        .iter()
        .enumerate()
        .filter_map(|(p, item)| match *item {
            Item::Node(id)
            | Item::Merge { cond: id, .. }
            | Item::Exit { w: id, .. } => Some((id, p as u32)),
            _ => None,
        })
        .collect();
    // A loop variable is read in its loop's enter step's slot.
    let mut loop_vars: HashMap<u32, (u32, u32)> = HashMap::new();
    for (p, item) in order.iter().enumerate() {
        if let Item::Enter { w } = *item {
            let first = control::loop_vars(&graph[w as usize]);
            for (i, v) in first.enumerate() {
                loop_vars.insert(v, (p as u32, i as u32));
            }
        }
    }
    let src = |o: &Output| -> Option<Src> {
        if let Some(&(p, i)) = loop_vars.get(&o.node) {
            return Some(Src::Slot(p, i));
        }
        if let Some(f) = feed_of(o) {
            return Some(Src::Feed(f as u32));
        }
        let node = &graph[o.node as usize];
        if matches!(node.op, Op::Constant(_)) {
            return Some(Src::Const(Arc::clone(node)));
        }
        pos.get(&o.node).map(|&p| Src::Slot(p, o.index))
    };
    let srcs = |outs: &[Output]| -> Result<Vec<Src>> {
        outs.iter()
            .map(|i| src(i).ok_or_else(|| Error::internal("unplanned input")))
            .collect()
    };
    let mut steps = Vec::with_capacity(order.len());
    for &item in &order {
        let id = match item {
            Item::Node(id) => id,
            Item::Switch { cond, else_at } => {
                let node = &graph[cond as usize];
                let inputs = vec![src(&node.inputs[0])
                    .ok_or_else(|| Error::internal("unplanned input"))?];
                steps.push(Step::control(node, inputs, Ctl::Switch(else_at)));
                continue;
            }
            Item::Jump { cond, to } => {
                let node = &graph[cond as usize];
                steps.push(Step::control(node, Vec::new(), Ctl::Jump(to)));
                continue;
            }
            Item::Merge { cond, switch } => {
                let node = &graph[cond as usize];
                let inputs = srcs(&node.inputs[1..])?;
                steps.push(Step::control(node, inputs, Ctl::Merge(switch)));
                continue;
            }
            Item::Enter { w } => {
                let node = &graph[w as usize];
                let n = (node.inputs.len() - 1) / 2;
                let inputs = srcs(&node.inputs[..n])?;
                steps.push(Step::control(node, inputs, Ctl::Enter));
                continue;
            }
            Item::Test { w, exit_at } => {
                let node = &graph[w as usize];
                let n = (node.inputs.len() - 1) / 2;
                let inputs = srcs(&node.inputs[n..=n])?;
                steps.push(Step::control(node, inputs, Ctl::Switch(exit_at)));
                continue;
            }
            Item::Next { w, enter, to } => {
                let node = &graph[w as usize];
                let n = (node.inputs.len() - 1) / 2;
                let inputs = srcs(&node.inputs[n + 1..])?;
                steps.push(Step::control(node, inputs, Ctl::Next(enter, to)));
                continue;
            }
            Item::Exit { w, enter } => {
                let node = &graph[w as usize];
                steps.push(Step::control(node, Vec::new(), Ctl::Exit(enter)));
                continue;
            }
        };
        let node = Arc::clone(&graph[id as usize]);
        let state = if node.is_resource() {
            inner.ensure(id)?
        } else {
            inner.state(id)
        };
        let uses = node
            .uses()
            .into_iter()
            .map(|u| {
                if graph[u as usize].is_resource() {
                    inner.ensure(u)
                } else {
                    Ok(inner.state(u))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let inputs = if node.steps_inputs() && !fully_fed(&node) {
            node.inputs
                .iter()
                .map(|i| {
                    src(i).ok_or_else(|| Error::internal("unplanned input"))
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let key = node
            .inputs
            .first()
            .and_then(|i| graph[i.node as usize].outputs[i.index as usize].key)
            .and_then(|k| src(&k));
        steps.push(Step {
            node,
            inputs,
            key,
            state,
            uses,
            movable: false,
            ctl: Ctl::None,
            moves: Vec::new(),
        });
    }
    let outs: Vec<Src> = targets
        .iter()
        .map(|t| src(t).ok_or_else(|| Error::internal("unplanned fetch")))
        .collect::<Result<_>>()?;
    // How many times each slot is read: by steps, as keys, as fetches.
    let mut reads: HashMap<(u32, u32), usize> = HashMap::new();
    let mut count = |s: &Src| {
        if let Src::Slot(p, i) = s {
            *reads.entry((*p, *i)).or_default() += 1;
        }
    };
    for st in &steps {
        st.inputs.iter().for_each(&mut count);
        st.key.iter().for_each(&mut count);
    }
    outs.iter().for_each(&mut count);
    for st in &mut steps {
        let bound = match st.ctl {
            Ctl::Merge(switch) => switch,
            Ctl::Next(enter, _) => enter,
            _ => continue,
        };
        st.moves = st
            .inputs
            .iter()
            .map(|s| match s {
                Src::Slot(p, i) => {
                    *p > bound && reads.get(&(*p, *i)) == Some(&1)
                }
                _ => false,
            })
            .collect();
    }
    // A step inside a loop runs again: it may not move what it reads.
    let mut depth = 0usize;
    for st in &mut steps {
        match st.ctl {
            Ctl::Enter => depth += 1,
            Ctl::Exit(_) => depth -= 1,
            _ => {}
        }
        if !matches!(st.ctl, Ctl::None) || depth > 0 {
            continue;
        }
        if let Some(Src::Slot(p, i)) = st.inputs.first() {
            let forwards = matches!(&st.node.op, Op::Def(d) if d.forwards());
            st.movable = forwards && reads.get(&(*p, *i)) == Some(&1);
        }
    }
    let shared = (0..outs.len())
        .map(|i| outs[i + 1..].iter().any(|o| same_src(o, &outs[i])))
        .collect();
    Ok(Compiled {
        steps,
        outs,
        shared,
    })
}

fn inner_graph(inner: &Inner) -> &Graph {
    inner.graph_ref()
}

fn same_src(a: &Src, b: &Src) -> bool {
    match (a, b) {
        (Src::Slot(p, i), Src::Slot(q, j)) => p == q && i == j,
        _ => false,
    }
}

fn value_of<'a>(
    src: &'a Src,
    done: &'a [Vec<Value>],
    feeds: &'a [(Output, Value)],
) -> &'a Value {
    match src {
        Src::Slot(p, i) => &done[*p as usize][*i as usize],
        Src::Const(node) => match &node.op {
            Op::Constant(v) => v,
            _ => unreachable!("Const sources are constants"),
        },
        Src::Feed(f) => &feeds[*f as usize].1,
    }
}

impl Compiled {
    /// Runs every step, leaving their outputs in `slots`.
    pub(crate) fn exec(
        &self,
        slots: &mut Vec<Vec<Value>>,
        ctx: &Ctx<'_>,
    ) -> Result<()> {
        if slots.len() != self.steps.len() {
            slots.resize_with(self.steps.len(), Vec::new);
        }
        for s in slots.iter_mut() {
            s.clear();
        }
        let mut i = 0;
        while let Some(step) = self.steps.get(i) {
            let (done, rest) = slots.split_at_mut(i);
            let out = &mut rest[0];
            // A step in a loop runs again: its last outputs go.
            out.clear();
            i += 1;
            match step.ctl {
                Ctl::None => {}
                Ctl::Next(enter, to) => {
                    let next = (0..step.inputs.len())
                        .map(|k| take_input(step, k, done, ctx.feeds))
                        .collect();
                    done[enter as usize] = next;
                    i = to as usize;
                    continue;
                }
                Ctl::Merge(switch) => {
                    let chosen = match done.get(switch as usize) {
                        Some(s) if !s.is_empty() => truth(&s[0]),
                        _ => Err(Error::internal("a merge before its switch")),
                    };
                    let n = step.inputs.len() / 2;
                    match chosen {
                        Ok(t) => {
                            let ks = if t { 0..n } else { n..2 * n };
                            for k in ks {
                                out.push(take_input(step, k, done, ctx.feeds));
                            }
                        }
                        Err(e) => return Err(annotate(e, None, &step.node)),
                    }
                    continue;
                }
                Ctl::Exit(enter) => {
                    out.append(&mut done[enter as usize]);
                    continue;
                }
                ctl => {
                    let ins =
                        |k: usize| value_of(&step.inputs[k], done, ctx.feeds);
                    match control_step(ctl, &ins, step.inputs.len(), out) {
                        Ok(Some(to)) => i = to as usize,
                        Ok(None) => {}
                        Err(e) => return Err(annotate(e, None, &step.node)),
                    }
                    continue;
                }
            }
            if step.movable {
                if let Some(Src::Slot(p, k)) = step.inputs.first() {
                    let v = std::mem::replace(
                        &mut done[*p as usize][*k as usize],
                        Value::Dense(Tensor::hollow()),
                    );
                    let done: &[Vec<Value>] = done;
                    let ins =
                        |k: usize| value_of(&step.inputs[k], done, ctx.feeds);
                    if let Err(e) = forward(step, v, &ins, out) {
                        return Err(annotate(e, None, &step.node));
                    }
                    continue;
                }
            }
            let ins = |k: usize| value_of(&step.inputs[k], done, ctx.feeds);
            let key = step.key.as_ref().map(|k| value_of(k, done, ctx.feeds));
            if let Err(e) = run_step(step, &ins, key, out, ctx) {
                return Err(annotate(e, key, &step.node));
            }
        }
        Ok(())
    }

    /// The fetched values, moved out of `slots` where no other fetch
    /// reads the same value.
    pub(crate) fn take_outputs(
        &self,
        slots: &mut [Vec<Value>],
        feeds: &[(Output, Value)],
    ) -> Vec<Value> {
        self.outs
            .iter()
            .zip(&self.shared)
            .map(|(src, &shared)| match src {
                Src::Slot(p, i) if !shared => std::mem::replace(
                    &mut slots[*p as usize][*i as usize],
                    Value::Dense(Tensor::hollow()),
                ),
                other => value_of(other, slots, feeds).clone(),
            })
            .collect()
    }
}

/// A reshape or identity of a value moved out of its slot; `ins` gives
/// the step's other inputs.
fn forward<'a>(
    step: &Step,
    v: Value,
    ins: &dyn Fn(usize) -> &'a Value,
    out: &mut Vec<Value>,
) -> Result<()> {
    // Only a forwarding op's step is movable.
    let Op::Def(def) = &step.node.op else {
        return Err(Error::internal("a movable step that is not an op"));
    };
    let args = Args::new(ins, step.inputs.len(), None, None);
    out.push(def.forward(v, &args)?);
    Ok(())
}

/// Input `k` of a merge or next step: moved out of its slot where the
/// compiler allowed it, else cloned.
fn take_input(
    step: &Step,
    k: usize,
    done: &mut [Vec<Value>],
    feeds: &[(Output, Value)],
) -> Value {
    match &step.inputs[k] {
        Src::Slot(p, i) if step.moves.get(k) == Some(&true) => {
            std::mem::replace(
                &mut done[*p as usize][*i as usize],
                Value::Dense(Tensor::hollow()),
            )
        }
        src => value_of(src, done, feeds).clone(),
    }
}

/// Adds the record key to an error that has none, and the node name to
/// the message.
fn annotate(e: Error, key: Option<&Value>, node: &Node) -> Error {
    if matches!(e.kind(), Kind::OutOfRange | Kind::Cancelled)
        || e.key().is_some()
        || e.file().is_some()
    {
        return e;
    }
    let e = match key.and_then(first_key) {
        Some(k) => e.with_key(k),
        None => e,
    };
    let msg = format!("{}: {}", node.name, e.message());
    e.with_message(msg)
}

fn first_key(v: &Value) -> Option<String> {
    let t = v.dense().ok()?;
    let s = t.as_slice::<Bytes>().ok()?.first()?;
    Some(String::from_utf8_lossy(s).into_owned())
}

/// What a dequeue of no elements gives, whatever the queue holds (as
/// TensorFlow): per component an empty batch of the node's static shape,
/// an unknown dimension (a padding queue's) counting as 0.
fn empty_batch(node: &Node) -> Result<Vec<Value>> {
    node.outputs
        .iter()
        .map(|o| {
            let dims: Vec<usize> = match &o.shape {
                Some(s) => s.dims().iter().map(|d| d.unwrap_or(0)).collect(),
                None => vec![0],
            };
            Ok(Tensor::zeros(o.dtype, dims)?.into())
        })
        .collect()
}

pub(super) fn queue_of(st: &NodeState) -> Result<&dyn Queue> {
    match st.res.get() {
        Some(Resource::Queue(q)) => Ok(&**q),
        Some(Resource::UserQueue(q)) => Ok(&**q),
        _ => Err(Error::internal("not a queue")),
    }
}

/// The files matching `pattern`, sorted, as a string vector; as in
/// TensorFlow, no match is an empty vector (a producer over it fails
/// naming the pattern). `match_filenames_once` and `matching_files`.
pub(super) fn matching_files(pattern: &str) -> Result<Value> {
    let found = match default_fs().glob(pattern) {
        Err(e) if e.kind() == Kind::NotFound => Vec::new(),
        found => found?,
    };
    let found = found.into_iter().map(Bytes::from).collect();
    Ok(Tensor::vector::<Bytes>(found).into())
}

/// Carries out a [`ReaderStateOp`] on `reader`; `ins(0)` is the state to
/// restore.
fn reader_state<'v>(
    reader: &Reader,
    op: ReaderStateOp,
    ins: impl Fn(usize) -> &'v Value,
) -> Result<Value> {
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    Ok(match op {
        ReaderStateOp::NumRecordsProduced => {
            Tensor::scalar(count(reader.num_records_produced())).into()
        }
        ReaderStateOp::NumWorkUnitsCompleted => {
            Tensor::scalar(count(reader.num_work_units_completed())).into()
        }
        ReaderStateOp::Reset => {
            reader.reset()?;
            Tensor::scalar(true).into()
        }
        ReaderStateOp::SerializeState => {
            Tensor::string(Bytes::from(reader.serialize_state()?)).into()
        }
        ReaderStateOp::RestoreState => {
            let state = ins(0).dense()?.as_slice::<Bytes>()?;
            reader.restore_state(&state[0])?;
            Tensor::scalar(true).into()
        }
    })
}

/// The queue a reader takes its work (file names) from.
fn work_of(st: &NodeState) -> Result<&dyn WorkQueue> {
    match st.res.get() {
        Some(Resource::Queue(q)) => Ok(&**q),
        Some(Resource::UserQueue(q)) => Ok(q),
        _ => Err(Error::internal("not a queue")),
    }
}

/// Runs the blocking call `f` (given a timeout, or `None` to wait for
/// ever) under the run's deadline.
///
/// With an interrupt, the wait is cut into slices: `f` is called with
/// the slice's timeout and, when it fails DeadlineExceeded before the
/// run's own deadline, the interrupt is checked and `f` called again.
/// Every blocking call used here takes nothing when it times out, so the
/// slicing cannot lose or repeat an element.
fn wait<T>(
    ctx: &Ctx<'_>,
    mut f: impl FnMut(Option<Duration>) -> Result<T>,
) -> Result<T> {
    let Some(interrupt) = ctx.interrupt else {
        return f(ctx
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now())));
    };
    let end = ctx.deadline.or_else(|| {
        ctx.op_timeout.and_then(|t| Instant::now().checked_add(t))
    });
    loop {
        let now = Instant::now();
        let slice = interrupt.every();
        let (timeout, last) = match end {
            Some(e) if e.saturating_duration_since(now) <= slice => {
                (e.saturating_duration_since(now), true)
            }
            _ => (slice, false),
        };
        match f(Some(timeout)) {
            Err(e) if !last && e.kind() == Kind::DeadlineExceeded => {
                if ctx.closed.load(Ordering::Relaxed) {
                    return Err(Error::cancelled("the session was closed"));
                }
                if interrupt.interrupted() {
                    return Err(Error::cancelled("the run was interrupted"));
                }
            }
            r => return r,
        }
    }
}

fn dequeue(q: &dyn Queue, ctx: &Ctx<'_>) -> Result<Vec<Value>> {
    wait(ctx, |t| match t {
        None => q.dequeue(),
        Some(t) => q.dequeue_timeout(t),
    })
}

fn run_step<'a>(
    step: &Step,
    ins: &dyn Fn(usize) -> &'a Value,
    key: Option<&Value>,
    out: &mut Vec<Value>,
    ctx: &Ctx<'_>,
) -> Result<()> {
    let node = &step.node;
    match &node.op {
        Op::Def(def) => {
            let rng = match step.state.res.get() {
                Some(Resource::Rng(rng)) => Some(rng),
                _ => None,
            };
            let args = Args::new(ins, step.inputs.len(), key, rng);
            def.run(&args, out)?;
        }
        Op::Constant(v) => out.push(v.clone()),
        Op::Call(call) => {
            let args: Vec<Value> =
                (0..step.inputs.len()).map(|k| ins(k).clone()).collect();
            let values = (call.f)(&args)?;
            let dtypes: Vec<DType> = values.iter().map(Value::dtype).collect();
            if dtypes != call.dtypes {
                return Err(Error::internal(format!(
                    "{} returned values of dtypes {dtypes:?}, declared \
                     {:?}",
                    node.name, call.dtypes
                )));
            }
            out.extend(values);
        }
        Op::Placeholder => {
            let s = node.outputs[0]
                .shape
                .as_ref()
                .map_or("unknown".to_owned(), |s| s.to_string());
            return Err(Error::invalid_argument(format!(
                "you must feed a value for placeholder {} (dtype {}, shape \
                 {s})",
                node.name, node.outputs[0].dtype
            )));
        }
        Op::Variable => match &*step.state.var.read() {
            Some(v) => out.push(v.clone()),
            None => {
                return Err(Error::new(
                    Kind::FailedPrecondition,
                    format!(
                        "attempting to use uninitialized variable {}",
                        node.name
                    ),
                ))
            }
        },
        Op::Assign { .. } => {
            let v = ins(0).clone();
            *step.uses_var().var.write() = Some(v.clone());
            out.push(v);
        }
        Op::MatchFilenames { .. } => match step.state.res.get() {
            Some(Resource::Once(v)) => out.push(v.clone()),
            _ => return Err(Error::internal("filenames not matched")),
        },
        Op::StringProducer { .. }
        | Op::InputProducer { .. }
        | Op::RangeProducer { .. }
        | Op::Queue { .. }
        | Op::Reader(_) => {
            return Err(Error::invalid_argument(format!(
                "{} is a queue or reader; fetch what reads it",
                node.name
            )))
        }
        Op::SliceProducer { .. } => {
            let Some(Resource::Slice(p)) = step.state.res.get() else {
                return Err(Error::internal("not a slice producer"));
            };
            let idx = dequeue(&**p.indices(), ctx)?;
            let i = idx[0].dense()?.scalar_value::<i32>()? as usize;
            for t in p.tensors().iter() {
                out.push(t.index(i)?.into());
            }
        }
        Op::LimitEpochs { n } => {
            let Some(Resource::Counter(c)) = step.state.res.get() else {
                return Err(Error::internal("not a counter"));
            };
            if c.fetch_add(1, Ordering::SeqCst) >= *n {
                return Err(Error::out_of_range(format!(
                    "{}: reached the limit of {n} epochs",
                    node.name
                )));
            }
            out.push(ins(0).clone());
        }
        Op::Dequeue { .. } => {
            let q = queue_of(&step.uses[0])?;
            out.extend(dequeue(q, ctx)?);
        }
        Op::Enqueue { many, .. } => {
            let q = queue_of(&step.uses[0])?;
            let values: Vec<Value> =
                (0..node.inputs.len()).map(|i| ins(i).clone()).collect();
            let n = if *many {
                values[0].dense()?.dims().first().copied().unwrap_or(0)
            } else {
                1
            };
            // An empty batch adds nothing, even to a closed queue (as
            // TensorFlow). A timed-out slice of the wait adds nothing, so
            // the values can be offered again.
            if n == 0 && q.is_closed() {
                out.push(Tensor::scalar(0i32).into());
                return Ok(());
            }
            wait(ctx, |t| match (many, t) {
                (false, None) => q.enqueue(values.clone()),
                (false, Some(t)) => q.enqueue_timeout(values.clone(), t),
                (true, None) => q.enqueue_many(values.clone()),
                (true, Some(t)) => q.enqueue_many_timeout(values.clone(), t),
            })?;
            out.push(Tensor::scalar(n as i32).into());
        }
        Op::QueueClose { cancel, .. } => {
            let q = queue_of(&step.uses[0])?;
            // As TensorFlow: a close that cancels pending enqueues always
            // succeeds; a plain one of a queue already closed fails.
            if !q.close(*cancel) && !*cancel {
                return Err(Error::cancelled(format!(
                    "Queue '{}' is already closed.",
                    q.name()
                )));
            }
            out.push(Tensor::scalar(true).into());
        }
        Op::QueueSize { .. } => {
            let q = queue_of(&step.uses[0])?;
            out.push(Tensor::scalar(q.size() as i32).into());
        }
        Op::QueueIsClosed { .. } => {
            let q = queue_of(&step.uses[0])?;
            out.push(Tensor::scalar(q.is_closed()).into());
        }
        Op::DequeueMany {
            n,
            up_to,
            unstackable,
            ..
        } => {
            if let Some(why) = unstackable {
                return Err(Error::invalid_argument(why.clone()));
            }
            let q = queue_of(&step.uses[0])?;
            if *n == 0 {
                out.extend(empty_batch(node)?);
            } else {
                let v = wait(ctx, |t| match (up_to, t) {
                    (false, None) => q.dequeue_many(*n),
                    (false, Some(t)) => q.dequeue_many_timeout(*n, t),
                    (true, None) => q.dequeue_up_to(*n),
                    (true, Some(t)) => q.dequeue_up_to_timeout(*n, t),
                })?;
                out.extend(v);
            }
        }
        Op::Read { .. } | Op::ReadUpTo { .. } => {
            let Some(Resource::Reader(reader)) = step.uses[0].res.get() else {
                return Err(Error::internal("not a reader"));
            };
            let q = work_of(&step.uses[1])?;
            if let Op::ReadUpTo { n, .. } = node.op {
                let records = wait(ctx, |t| match t {
                    None => reader.read_up_to(q, n),
                    Some(t) => reader.read_up_to_timeout(q, n, t),
                })?;
                let mut keys = Vec::with_capacity(records.len());
                let mut values = Vec::with_capacity(records.len());
                for r in records {
                    keys.push(Bytes::from(r.key));
                    values.push(r.value);
                }
                out.push(Tensor::vector(keys).into());
                out.push(Tensor::vector(values).into());
            } else {
                let r = wait(ctx, |t| match t {
                    None => reader.read(q),
                    Some(t) => reader.read_timeout(q, t),
                })?;
                out.push(Tensor::string(r.key).into());
                out.push(Tensor::string(r.value).into());
            }
        }
        Op::ReaderState { op, .. } => {
            let Some(Resource::Reader(reader)) = step.uses[0].res.get() else {
                return Err(Error::internal("not a reader"));
            };
            out.push(reader_state(reader, *op, ins)?);
        }
        Op::Batch(_) => {
            let Some(Resource::Batch(source)) = step.state.res.get() else {
                return Err(Error::internal("not a batching stage"));
            };
            let batch = wait(ctx, |t| match t {
                None => source.next_batch(),
                Some(t) => source.next_batch_timeout(t),
            })?;
            out.extend(batch.into_components());
        }
    }
    if ctx.user && node.takes_input() {
        step.state.taken.fetch_add(1, Ordering::SeqCst);
    }
    if ctx.closed.load(Ordering::Relaxed) {
        return Err(Error::cancelled("the session was closed"));
    }
    Ok(())
}

impl Step {
    /// The variable an Assign step writes.
    fn uses_var(&self) -> &NodeState {
        &self.uses[0]
    }
}
