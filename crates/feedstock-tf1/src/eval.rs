//! Evaluation: a list of outputs compiled into an ordered list of steps,
//! and the kernels each node runs.
//!
//! ADVICE FOR HACKERS: a compiled list is made once per batching runner
//! (and once per [`Session::run`](super::Session::run)); a runner then
//! evaluates it once per example, reusing its slot vectors, so that a
//! step allocates nothing but the tensors the kernels make. Inputs are
//! read by reference; outputs leave the slots by move.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::kernels::expand;
use crate::kernels::{adjust, bbox, resize};
use feedstock::decode::csv::CsvDecoder;
use feedstock::decode::example::{
    parse_example, parse_sequence_example, parse_single_example,
    parse_single_sequence_example, FeatureKind, FeatureSpec, ParsedSequence,
};
use feedstock::decode::image;
use feedstock::decode::ops;
use feedstock::decode::raw::{decode_raw, decode_raw_batch};
use feedstock::decode::reduce;
use feedstock::decode::Records;
use feedstock::error::{Error, Kind, Result};
use feedstock::io::fs::{default_fs, io_error};
use feedstock::queue::Queue;
use feedstock::reader::{Reader, WorkQueue};
use feedstock::tensor::{DType, Tensor, Value};

use super::graph::{
    AdjustOp, Graph, ImageOp, Node, Op, Output, ReaderStateOp, SliceDim,
    SparsePart,
};
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
}

/// Checks a fed value against its output's static dtype and shape.
pub(crate) fn check_feed(graph: &Graph, o: Output, v: &Value) -> Result<()> {
    let name = graph.name(o);
    if v.dtype() != o.dtype() {
        return Err(Error::invalid_argument(format!(
            "fed a {} value for {name}:{}, which is {}",
            v.dtype(),
            o.index(),
            o.dtype()
        )));
    }
    if let (Value::Dense(t), Some(s)) = (v, graph.shape(o)) {
        if !s.is_compatible(t.dims()) {
            return Err(Error::invalid_argument(format!(
                "fed a value of shape {:?} for {name}:{}, which has shape {s}",
                t.dims(),
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
            let forwards = match &st.node.op {
                Op::Def(def) => def.forwards(),
                op => matches!(op, Op::Reshape(_) | Op::Identity),
            };
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
                    if let Err(e) = forward(step, v, out) {
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

/// A reshape or identity of a value moved out of its slot.
fn forward(step: &Step, v: Value, out: &mut Vec<Value>) -> Result<()> {
    match &step.node.op {
        Op::Def(def) => out.push(def.forward(v)?),
        Op::Reshape(shape) => {
            let t = v.into_dense()?;
            let dims = resolve_reshape(shape, t.num_elements())?;
            out.push(t.reshape(dims)?.into());
        }
        _ => out.push(v),
    }
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

fn keys_of(key: Option<&Value>) -> Vec<Cow<'_, str>> {
    match key.and_then(|v| v.dense().ok()) {
        Some(t) => t
            .as_slice::<Bytes>()
            .map(|s| s.iter().map(|b| String::from_utf8_lossy(b)).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

/// Records named by their keys when there is one key per record.
fn records<'a>(
    values: &'a [Bytes],
    keys: &'a [Cow<'a, str>],
) -> Result<Records<'a>> {
    let r = Records::new(values);
    if keys.len() == values.len() {
        r.with_keys(keys)
    } else {
        Ok(r)
    }
}

fn dense_in<'a>(
    ins: &dyn Fn(usize) -> &'a Value,
    k: usize,
) -> Result<&'a Tensor> {
    ins(k).dense()
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

/// A crop size computed when run (an int32 or int64 vector) as sizes;
/// a negative one is InvalidArgument.
fn crop_size(t: &Tensor) -> Result<Vec<usize>> {
    let v = t.cast(DType::I64)?;
    let v = v.as_slice::<i64>()?;
    v.iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            Error::invalid_argument(format!(
                "the crop size {v:?} holds a negative value"
            ))
        })
}

/// The `[height, width]` of a resize, checked as TensorFlow's kernels
/// check it.
fn resize_size(t: &Tensor) -> Result<[usize; 2]> {
    let v = t.cast(DType::I64)?;
    let v = v.as_slice::<i64>()?;
    if t.rank() != 1 {
        return Err(Error::invalid_argument("shape_t must be 1-dimensional"));
    }
    let [h, w] = v else {
        return Err(Error::invalid_argument("shape_t must have two elements"));
    };
    match (usize::try_from(*h), usize::try_from(*w)) {
        (Ok(h), Ok(w)) if h > 0 && w > 0 => Ok([h, w]),
        _ => Err(Error::invalid_argument(
            "output dimensions must be positive",
        )),
    }
}

/// A padding box given as tensors, checked in the order of TensorFlow's
/// assertions (offsets, then the room left on each side).
fn checked_pad(t: &Tensor, b: [i64; 4]) -> Result<[usize; 4]> {
    let [oh, ow, th, tw] = b;
    let fail = |m: &str| {
        Err(Error::invalid_argument(format!("assertion failed: [{m}]")))
    };
    if oh < 0 {
        return fail("offset_height must be >= 0");
    }
    if ow < 0 {
        return fail("offset_width must be >= 0");
    }
    let d = t.dims();
    if d.len() >= 3 {
        let (h, w) = (d[d.len() - 3] as i64, d[d.len() - 2] as i64);
        if tw - ow - w < 0 {
            return fail("width must be <= target - offset");
        }
        if th - oh - h < 0 {
            return fail("height must be <= target - offset");
        }
    }
    Ok([oh as usize, ow as usize, th as usize, tw as usize])
}

/// An int32 or int64 vector's values.
fn int_vector(t: &Tensor) -> Result<Vec<i64>> {
    if t.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "expected an integer vector, got shape {}",
            t.shape()
        )));
    }
    Ok(t.cast(DType::I64)?.as_slice::<i64>()?.to_vec())
}

/// `tf.slice`'s begin and size checked against `dims` as TensorFlow
/// checks them (its words); a size of -1 runs to the end.
fn slice_bounds(
    dims: &[usize],
    begin: &[i64],
    size: &[i64],
) -> Result<(Vec<usize>, Vec<usize>)> {
    if begin.len() != dims.len() || size.len() != dims.len() {
        return Err(Error::invalid_argument(format!(
            "Expected begin and size arguments to be 1-D tensors of size \
             {}, but got shapes [{}] and [{}] instead.",
            dims.len(),
            begin.len(),
            size.len()
        )));
    }
    let (mut b, mut s) = (Vec::new(), Vec::new());
    for (k, &d) in dims.iter().enumerate() {
        let d = d as i64;
        let len = if size[k] == -1 { d - begin[k] } else { size[k] };
        if begin[k] < 0 || begin[k] > d {
            return Err(Error::invalid_argument(format!(
                "Expected begin[{k}] in [0, {d}], but got {}",
                begin[k]
            )));
        }
        if len < 0 || begin[k] + len > d {
            return Err(Error::invalid_argument(format!(
                "Expected size[{k}] in [0, {}], but got {}",
                d - begin[k],
                size[k]
            )));
        }
        b.push(begin[k] as usize);
        s.push(len as usize);
    }
    Ok((b, s))
}

/// An int32 or int64 scalar's value.
/// A bounding box given as inputs 1 to 4 (offsets, then sizes), each an
/// int32 or int64 scalar.
fn box_inputs<'a>(ins: &dyn Fn(usize) -> &'a Value) -> Result<[i64; 4]> {
    let mut b = [0; 4];
    for (k, v) in b.iter_mut().enumerate() {
        *v = int_scalar(dense_in(ins, k + 1)?)?;
    }
    Ok(b)
}

fn int_scalar(t: &Tensor) -> Result<i64> {
    match t.dtype() {
        DType::I32 => t.scalar_value::<i32>().map(i64::from),
        _ => t.scalar_value::<i64>(),
    }
}

/// A crop box (offset height and width, target height and width) checked
/// against `image` as TensorFlow's `crop_to_bounding_box` asserts it, in
/// its order and words.
fn checked_box(image: &Tensor, b: [i64; 4]) -> Result<[usize; 4]> {
    let d = image.dims();
    if !(3..=4).contains(&d.len()) {
        return Err(Error::invalid_argument(format!(
            "crop_to_bounding_box: the image (shape {}) must have 3 or 4 \
             dimensions",
            image.shape()
        )));
    }
    let (h, w) = (d[d.len() - 3] as i64, d[d.len() - 2] as i64);
    let [oh, ow, th, tw] = b;
    let checks = [
        (ow >= 0, "offset_width must be >= 0."),
        (oh >= 0, "offset_height must be >= 0."),
        (tw > 0, "target_width must be > 0."),
        (th > 0, "target_height must be > 0."),
        (
            w >= tw.saturating_add(ow),
            "width must be >= target + offset.",
        ),
        (
            h >= th.saturating_add(oh),
            "height must be >= target + offset.",
        ),
    ];
    if let Some((_, why)) = checks.iter().find(|(ok, _)| !ok) {
        return Err(Error::invalid_argument(format!(
            "assertion failed: [{why}]"
        )));
    }
    // Every part is now a non-negative value no larger than a dimension.
    Ok(b.map(|v| v as usize))
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

/// A path or pattern given as a string scalar.
fn string_scalar(t: &Tensor) -> Result<String> {
    let b = t.scalar_value::<Bytes>()?;
    String::from_utf8(b.to_vec()).map_err(|_| {
        Error::invalid_argument(format!(
            "a file name is not UTF-8: {:?}",
            String::from_utf8_lossy(&b)
        ))
    })
}

/// The error for serialized records of the wrong rank at run time (a
/// placeholder of unknown shape fed another rank), in TensorFlow's words.
fn serialized_rank(t: &Tensor, batched: bool) -> Error {
    let want = if batched {
        "a scalar or vector"
    } else {
        "a scalar"
    };
    Error::invalid_argument(format!(
        "expected serialized to be {want}, got shape {:?}",
        t.dims()
    ))
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
    let key_str = || -> Cow<'_, str> {
        key.and_then(|v| v.dense().ok())
            .and_then(|t| t.as_slice::<Bytes>().ok())
            .and_then(|s| s.first())
            .map_or(Cow::Borrowed(""), |b| String::from_utf8_lossy(b))
    };
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
        Op::DecodeCsv(decoder) => {
            decode_csv(decoder, dense_in(ins, 0)?, key, out)?;
        }
        Op::DecodeRaw { dtype, order } => {
            let t = dense_in(ins, 0)?;
            let s = t.as_slice::<Bytes>()?;
            let r = match t.rank() {
                0 => decode_raw(&s[0], *dtype, *order)?,
                1 => decode_raw_batch(s, *dtype, *order)?,
                _ => {
                    // Decoded as one batch, then given the input's dims.
                    let r = decode_raw_batch(s, *dtype, *order)?;
                    let mut dims = t.dims().to_vec();
                    dims.push(r.dims()[1]);
                    r.reshape(dims)?
                }
            };
            out.push(r.into());
        }
        Op::Parse { spec, batched } => {
            let t = dense_in(ins, 0)?;
            let s = t.as_slice::<Bytes>()?;
            let parsed = match (*batched, t.rank()) {
                (true, 1) => {
                    let keys = keys_of(key);
                    parse_example(records(s, &keys)?, spec)?
                }
                // One record: its outputs have no batch dim (TensorFlow's
                // parse_example of a scalar).
                (_, 0) => parse_single_example(&s[0], spec, &key_str())?,
                (_, _) => return Err(serialized_rank(t, *batched)),
            };
            out.extend(parsed.into_values());
        }
        Op::ParseSequence {
            context,
            sequence,
            batched,
        } => {
            let t = dense_in(ins, 0)?;
            let s = t.as_slice::<Bytes>()?;
            if t.rank() != usize::from(*batched) {
                return Err(serialized_rank(t, *batched));
            }
            let parsed = if *batched {
                let keys = keys_of(key);
                parse_sequence_example(records(s, &keys)?, context, sequence)?
            } else {
                let k = key_str();
                parse_single_sequence_example(&s[0], context, sequence, &k)?
            };
            push_sequence(parsed, sequence, *batched, out)?;
        }
        Op::DecodeImage(spec) => {
            let t = dense_in(ins, 0)?;
            let b = t.scalar_value::<Bytes>()?;
            out.push(image::decode(&b, spec, &key_str())?.into());
        }
        Op::Image(op) => {
            let t = dense_in(ins, 0)?;
            let r = match op {
                ImageOp::FlipLeftRight => ops::flip_left_right(t)?,
                ImageOp::FlipUpDown => ops::flip_up_down(t)?,
                ImageOp::Standardize => ops::per_image_standardization(t)?,
            };
            out.push(r.into());
        }
        Op::Adjust(op) => {
            let t = dense_in(ins, 0)?;
            let f = dense_in(ins, 1)?.scalar_value::<f32>()?;
            let r = match op {
                AdjustOp::Contrast => adjust::adjust_contrast(t, f)?,
                AdjustOp::Hue => adjust::adjust_hue(t, f)?,
                AdjustOp::Saturation => adjust::adjust_saturation(t, f)?,
            };
            out.push(r.into());
        }
        Op::PadToBox { offset, size } => {
            let t = dense_in(ins, 0)?;
            let r = adjust::pad_to_bounding_box(
                t, offset[0], offset[1], size[0], size[1],
            )?;
            out.push(r.into());
        }
        Op::Resize(opts) => {
            let t = dense_in(ins, 0)?;
            let [h, w] = resize_size(dense_in(ins, 1)?)?;
            out.push(resize::resize(t, h, w, *opts)?.into());
        }
        Op::SampleBox { sampling, .. } => {
            let Some(Resource::Rng(rng)) = step.state.res.get() else {
                return Err(Error::internal("not a random op"));
            };
            bbox::check_sampling(sampling)?;
            let size_in = dense_in(ins, 0)?;
            let size = size_in.cast(DType::I64)?;
            let boxes = dense_in(ins, 1)?;
            if boxes.rank() != 3 || boxes.dims()[2] != 4 {
                return Err(Error::invalid_argument(format!(
                    "input boxes must be 3-dimensional [batch, num_boxes, \
                     coords]: {}",
                    boxes.shape()
                )));
            }
            let covered = dense_in(ins, 2)?.scalar_value::<f32>()?;
            let (begin, size, frac) = bbox::sample_distorted_bounding_box(
                size.as_slice::<i64>()?,
                boxes.as_slice::<f32>()?,
                covered,
                sampling,
                &mut *rng.lock(),
            )?;
            let ints =
                |v: [i64; 3]| Tensor::vector(v.to_vec()).cast(size_in.dtype());
            out.push(ints(begin)?.into());
            out.push(ints(size)?.into());
            out.push(Tensor::new([1, 1, 4], frac.to_vec())?.into());
        }
        Op::CentralCrop { fraction } => {
            let t = dense_in(ins, 0)?;
            out.push(adjust::central_crop(t, *fraction)?.into());
        }
        Op::PadToBoxInputs => {
            let t = dense_in(ins, 0)?;
            let [oh, ow, th, tw] = checked_pad(t, box_inputs(ins)?)?;
            let r = adjust::pad_to_bounding_box(t, oh, ow, th, tw)?;
            out.push(r.into());
        }
        Op::CropOrPadInputs => {
            let t = dense_in(ins, 0)?;
            let th = int_scalar(dense_in(ins, 1)?)?;
            let tw = int_scalar(dense_in(ins, 2)?)?;
            if tw <= 0 {
                return Err(Error::invalid_argument(
                    "assertion failed: [target_width must be > 0.]",
                ));
            }
            if th <= 0 {
                return Err(Error::invalid_argument(
                    "assertion failed: [target_height must be > 0.]",
                ));
            }
            let r = adjust::crop_or_pad(t, th as usize, tw as usize)?;
            out.push(r.into());
        }
        Op::ExtractJpegShape(dtype) => {
            let t = dense_in(ins, 0)?;
            let b = t.scalar_value::<Bytes>()?;
            let shape = image::extract_jpeg_shape(&b)?.map(|d| d as i64);
            out.push(Tensor::vector(shape.to_vec()).cast(*dtype)?.into());
        }
        Op::CropOrPad { size } => {
            let t = dense_in(ins, 0)?;
            out.push(adjust::crop_or_pad(t, size[0], size[1])?.into());
        }
        Op::RandomFlip { .. } | Op::RandomCrop { .. } => {
            let Some(Resource::Rng(rng)) = step.state.res.get() else {
                return Err(Error::internal("not a random op"));
            };
            let t = dense_in(ins, 0)?;
            let mut rng = rng.lock();
            let r = match &node.op {
                Op::RandomCrop {
                    size: Some(size), ..
                } => ops::random_crop(t, size, &mut *rng)?,
                Op::RandomCrop { size: None, .. } => {
                    let size = crop_size(dense_in(ins, 1)?)?;
                    ops::random_crop(t, &size, &mut *rng)?
                }
                Op::RandomFlip { up_down: true, .. } => {
                    ops::random_flip_up_down(t, &mut *rng)?
                }
                _ => ops::random_flip_left_right(t, &mut *rng)?,
            };
            out.push(r.into());
        }
        Op::CropToBox { offset, size } => {
            let t = dense_in(ins, 0)?;
            out.push(
                ops::crop_to_bounding_box(
                    t, offset[0], offset[1], size[0], size[1],
                )?
                .into(),
            );
        }
        Op::CropToBoxInputs => {
            let t = dense_in(ins, 0)?;
            let [oh, ow, th, tw] = checked_box(t, box_inputs(ins)?)?;
            out.push(ops::crop_to_bounding_box(t, oh, ow, th, tw)?.into());
        }
        Op::SparsePart(part) => {
            let sp = ins(0).sparse()?;
            out.push(
                match part {
                    SparsePart::Indices => sp.indices().clone(),
                    SparsePart::Values => sp.values().clone(),
                    SparsePart::DenseShape => {
                        let dims =
                            sp.dims().iter().map(|&d| d as i64).collect();
                        Tensor::vector::<i64>(dims)
                    }
                }
                .into(),
            );
        }
        Op::ReadFile => {
            let path = string_scalar(dense_in(ins, 0)?)?;
            let fs = default_fs();
            let mut contents = Vec::new();
            fs.open(&path)?
                .read_to_end(&mut contents)
                .map_err(|e| io_error(&path, e))?;
            out.push(Tensor::string(Bytes::from(contents)).into());
        }
        Op::MatchingFiles => {
            let pattern = string_scalar(dense_in(ins, 0)?)?;
            out.push(matching_files(&pattern)?);
        }
        Op::SparseToDense { validate } => {
            let sp = ins(0).sparse()?;
            if *validate {
                sp.validate_order()?;
            }
            out.push(sp.to_dense(dense_in(ins, 1)?)?.into());
        }
        Op::MakeSparse => {
            let shape = dense_in(ins, 2)?;
            let dims = shape
                .as_slice::<i64>()?
                .iter()
                .map(|&d| {
                    usize::try_from(d).map_err(|_| {
                        Error::invalid_argument(format!(
                            "SparseTensor: dense_shape {d} is negative"
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let sp = feedstock::SparseTensor::new_unvalidated(
                dense_in(ins, 0)?.clone(),
                dense_in(ins, 1)?.clone(),
                dims,
            )?;
            out.push(Value::Sparse(sp));
        }
        Op::Reshape(shape) => {
            let t = dense_in(ins, 0)?;
            let dims = resolve_reshape(shape, t.num_elements())?;
            out.push(t.clone().reshape(dims)?.into());
        }
        Op::Slice { begin, size } => {
            let t = dense_in(ins, 0)?;
            if t.rank() != begin.len() {
                return Err(Error::invalid_argument(format!(
                    "slice: {} indices for a tensor of shape {:?}",
                    begin.len(),
                    t.dims()
                )));
            }
            let size: Vec<usize> = size
                .iter()
                .zip(begin)
                .zip(t.dims())
                .map(|((&s, &b), &d)| {
                    if s >= 0 {
                        s as usize
                    } else {
                        d.saturating_sub(b)
                    }
                })
                .collect();
            out.push(ops::slice(t, begin, &size)?.into());
        }
        Op::ArgReduce { axis, max, dtype } => {
            let t = dense_in(ins, 0)?;
            out.push(reduce::arg_reduce(t, *axis, *max, *dtype)?.into());
        }
        Op::Reduce {
            op,
            axes,
            keep_dims,
        } => {
            let t = dense_in(ins, 0)?;
            out.push(reduce::reduce(t, axes, *keep_dims, *op)?.into());
        }
        Op::RandomUniform {
            dims,
            dtype,
            min,
            max,
            ..
        } => {
            let Some(Resource::Rng(rng)) = step.state.res.get() else {
                return Err(Error::internal("not a random op"));
            };
            let mut rng = rng.lock();
            let r =
                reduce::random_uniform(dims, *dtype, *min, *max, &mut *rng)?;
            out.push(r.into());
        }
        Op::RandomShuffle { .. } => {
            let Some(Resource::Rng(rng)) = step.state.res.get() else {
                return Err(Error::internal("not a random op"));
            };
            let mut rng = rng.lock();
            let r = reduce::random_shuffle(dense_in(ins, 0)?, &mut *rng)?;
            out.push(r.into());
        }
        Op::Select => {
            let (c, x, y) =
                (dense_in(ins, 0)?, dense_in(ins, 1)?, dense_in(ins, 2)?);
            out.push(reduce::select(c, x, y)?.into());
        }
        Op::WhereTrue => {
            out.push(reduce::where_true(dense_in(ins, 0)?)?.into());
        }
        Op::Tile(multiples) => {
            out.push(expand::tile(dense_in(ins, 0)?, multiples)?.into());
        }
        Op::Gather(axis) => {
            let (p, i) = (dense_in(ins, 0)?, dense_in(ins, 1)?);
            out.push(reduce::gather(p, i, *axis)?.into());
        }
        Op::SliceInputs => {
            let t = dense_in(ins, 0)?;
            let begin = int_vector(dense_in(ins, 1)?)?;
            let size = int_vector(dense_in(ins, 2)?)?;
            let (begin, size) = slice_bounds(t.dims(), &begin, &size)?;
            out.push(ops::slice(t, &begin, &size)?.into());
        }
        Op::StridedSliceInputs => {
            let t = dense_in(ins, 0)?;
            let [b, e, st] =
                [1, 2, 3].map(|k| dense_in(ins, k).and_then(int_vector));
            let (b, e, st) = (b?, e?, st?);
            if b.len() != e.len() || b.len() != st.len() {
                return Err(Error::invalid_argument(
                    "strided_slice: begin, end and strides differ in length",
                ));
            }
            if st.contains(&0) {
                return Err(Error::invalid_argument(
                    "strides[i] must be non-zero",
                ));
            }
            let dims: Vec<SliceDim> = (0..b.len())
                .map(|k| SliceDim::Range {
                    start: Some(b[k]),
                    stop: Some(e[k]),
                    step: st[k],
                })
                .collect();
            out.push(strided_slice(t, &dims)?.into());
        }
        Op::StringToNumber(dtype) => {
            let t = dense_in(ins, 0)?;
            out.push(feedstock::decode::string_to_number(t, *dtype)?.into());
        }
        Op::StringSplit {
            delimiter,
            skip_empty,
        } => {
            let t = dense_in(ins, 0)?;
            let sp =
                feedstock::decode::string_split(t, delimiter, *skip_empty)?;
            out.push(Value::Sparse(sp));
        }
        Op::Shape => {
            let t = dense_in(ins, 0)?;
            let dims = t
                .dims()
                .iter()
                .map(|&d| i32::try_from(d))
                .collect::<std::result::Result<Vec<i32>, _>>()
                .map_err(|_| {
                    Error::invalid_argument("shape: a dimension exceeds int32")
                })?;
            out.push(Tensor::vector::<i32>(dims).into());
        }
        Op::Fill => {
            let dims = crop_size(dense_in(ins, 0)?)?;
            out.push(expand::fill(&dims, dense_in(ins, 1)?)?.into());
        }
        Op::StridedSlice(dims) => {
            out.push(strided_slice(dense_in(ins, 0)?, dims)?.into());
        }
        Op::Transpose(perm) => {
            out.push(ops::transpose(dense_in(ins, 0)?, perm)?.into());
        }
        Op::Stack(axis) | Op::Concat(axis) => {
            let ts: Vec<Tensor> = (0..step.inputs.len())
                .map(|k| dense_in(ins, k).cloned())
                .collect::<Result<_>>()?;
            let stacking = matches!(node.op, Op::Stack(_));
            out.push(stack_or_concat(&ts, *axis, stacking)?.into());
        }
        Op::Identity => out.push(ins(0).clone()),
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

/// Pushes the outputs of `Op::ParseSequence`: the context features, the
/// feature lists and, `batched`, the lengths of the `FixedSequence`
/// lists, each in spec order, as the node declares them.
fn push_sequence(
    parsed: ParsedSequence,
    sequence: &FeatureSpec,
    batched: bool,
    out: &mut Vec<Value>,
) -> Result<()> {
    out.extend(parsed.context.into_values());
    out.extend(parsed.feature_lists.into_values());
    if !batched {
        // TensorFlow's single parse has no lengths output.
        return Ok(());
    }
    // `lengths` is keyed by name; the node's outputs follow the spec.
    let mut lengths = parsed.lengths;
    for (name, kind) in sequence.iter() {
        if let FeatureKind::FixedSequence { .. } = kind {
            let l = lengths.remove(name).ok_or_else(|| {
                Error::internal(format!("no length for {name:?}"))
            })?;
            out.push(l.into());
        }
    }
    Ok(())
}

fn decode_csv(
    decoder: &CsvDecoder,
    t: &Tensor,
    key: Option<&Value>,
    out: &mut Vec<Value>,
) -> Result<()> {
    let records = t.as_slice::<Bytes>()?;
    let keys = keys_of(key);
    let cols = decoder.decode_batch(self::records(records, &keys)?)?;
    for c in cols {
        out.push(c.reshape(t.dims().to_vec())?.into());
    }
    Ok(())
}

/// The dims of a reshape, its -1 resolved.
fn resolve_reshape(shape: &[i64], total: usize) -> Result<Vec<usize>> {
    let known: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let bad = || {
        Error::invalid_argument(format!(
            "cannot reshape a tensor of {total} elements to {shape:?}"
        ))
    };
    shape
        .iter()
        .map(|&d| {
            if d >= 0 {
                Ok(d as usize)
            } else if known == 0 {
                if total == 0 {
                    Ok(0)
                } else {
                    Err(bad())
                }
            } else if total.is_multiple_of(known) {
                Ok(total / known)
            } else {
                Err(bad())
            }
        })
        .collect()
}

/// Stacks (new axis) or concatenates (existing axis) along `axis`.
fn stack_or_concat(
    ts: &[Tensor],
    axis: i64,
    stacking: bool,
) -> Result<Tensor> {
    let rank = ts
        .first()
        .ok_or_else(|| Error::invalid_argument("needs a tensor"))?
        .rank();
    let out_rank = if stacking { rank + 1 } else { rank };
    let r = out_rank as i64;
    if axis < -r || axis >= r {
        return Err(Error::invalid_argument(format!(
            "axis {axis} out of range for rank {out_rank}"
        )));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    if a == 0 {
        return if stacking {
            Tensor::stack(ts)
        } else {
            Tensor::concat(ts)
        };
    }
    // Move `a` to the front, join along axis 0, move it back.
    let mut to_front = vec![a];
    to_front.extend((0..rank).filter(|&k| k != a));
    let joined = if stacking {
        Tensor::stack(ts)?
    } else {
        let moved = ts
            .iter()
            .map(|t| ops::transpose(t, &to_front))
            .collect::<Result<Vec<_>>>()?;
        Tensor::concat(&moved)?
    };
    // In `joined`, axis 0 is the joined one; put it at `a`.
    let mut perm: Vec<usize> = Vec::with_capacity(out_rank);
    for k in 0..out_rank {
        perm.push(if k < a {
            k + 1
        } else if k == a {
            0
        } else {
            k
        });
    }
    ops::transpose(&joined, &perm)
}

/// Pairs each entry of a Python index with the input axis it reads
/// (`None` for a new axis), the ellipsis expanded.
pub(crate) fn expand_slice(
    dims: &[SliceDim],
    rank: usize,
) -> Result<Vec<(SliceDim, Option<usize>)>> {
    let named = dims
        .iter()
        .filter(|d| !matches!(d, SliceDim::NewAxis | SliceDim::Ellipsis))
        .count();
    if named > rank {
        return Err(Error::invalid_argument(format!(
            "too many indices ({named}) for a tensor of rank {rank}"
        )));
    }
    let full = SliceDim::Range {
        start: None,
        stop: None,
        step: 1,
    };
    let mut out = Vec::new();
    let mut axis = 0;
    let mut saw_ellipsis = false;
    for d in dims {
        match d {
            SliceDim::NewAxis => out.push((*d, None)),
            SliceDim::Ellipsis => {
                saw_ellipsis = true;
                for _ in 0..rank - named {
                    out.push((full, Some(axis)));
                    axis += 1;
                }
            }
            _ => {
                out.push((*d, Some(axis)));
                axis += 1;
            }
        }
    }
    if !saw_ellipsis {
        while axis < rank {
            out.push((full, Some(axis)));
            axis += 1;
        }
    }
    Ok(out)
}

/// A Python index `i` into a dimension of `n`.
pub(crate) fn resolve_index(i: i64, n: usize) -> Result<usize> {
    let n = n as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return Err(Error::invalid_argument(format!(
            "index {i} out of range for a dimension of {n}"
        )));
    }
    Ok(j as usize)
}

/// Python's `slice(start, stop, step).indices(n)`: the first position and
/// the number of positions.
pub(crate) fn range_len(
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    n: usize,
) -> (i64, usize) {
    let n = n as i64;
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let norm = |v: i64| if v < 0 { v + n } else { v };
    if step > 0 {
        let s = clamp(start.map_or(0, norm), 0, n);
        let e = clamp(stop.map_or(n, norm), 0, n);
        let len = if e > s { (e - s + step - 1) / step } else { 0 };
        (s, len as usize)
    } else {
        let s = clamp(start.map_or(n - 1, norm), -1, n - 1);
        let e = clamp(stop.map_or(-1, norm), -1, n - 1);
        let len = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        (s, len as usize)
    }
}

/// `t[dims...]`, Python's indexing.
fn strided_slice(t: &Tensor, dims: &[SliceDim]) -> Result<Tensor> {
    let in_dims = t.dims();
    let plan = expand_slice(dims, in_dims.len())?;
    let mut strides = vec![1i64; in_dims.len()];
    for k in (0..in_dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * in_dims[k + 1] as i64;
    }
    let mut base = 0i64;
    // Per output axis (of the gathered block, before new axes): length
    // and source stride.
    let mut walk: Vec<(usize, i64)> = Vec::new();
    let mut out_dims = Vec::new();
    for (entry, axis) in plan {
        match (entry, axis) {
            (SliceDim::NewAxis, _) => out_dims.push(1),
            (SliceDim::At(i), Some(k)) => {
                base += resolve_index(i, in_dims[k])? as i64 * strides[k];
            }
            (SliceDim::Range { start, stop, step }, Some(k)) => {
                let (s, len) = range_len(start, stop, step, in_dims[k]);
                if len > 0 {
                    base += s * strides[k];
                }
                walk.push((len, strides[k] * step));
                out_dims.push(len);
            }
            _ => {}
        }
    }
    // The strided copy of `tf.slice` and `tf.transpose` (runs copied
    // whole, planes interleaved), not a list of every element's offset
    // and a gather, which made CIFAR's decoding in the graph 5 times
    // slower, batched or not (`benches/plan.rs`, `cifar_graph_generic_ops`).
    let (lens, steps): (Vec<usize>, Vec<isize>) =
        walk.iter().map(|&(n, s)| (n, s as isize)).unzip();
    let data = ops::strided(t.data(), &lens, &steps, base as usize);
    Tensor::from_data(out_dims, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_bounds_as_tensorflow_checks_them() {
        let (b, s) = slice_bounds(&[4, 3], &[1, 0], &[-1, 2]).unwrap();
        assert_eq!((b, s), (vec![1, 0], vec![3, 2]));
        let e = slice_bounds(&[3], &[2], &[2]).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.message().contains("size[0] in [0, 1]"));
        assert!(slice_bounds(&[3], &[4], &[-1]).is_err());
        assert!(slice_bounds(&[3], &[0, 0], &[1]).is_err());
    }

    #[test]
    fn python_slice_lengths() {
        assert_eq!(range_len(None, None, 1, 5), (0, 5));
        assert_eq!(range_len(Some(1), Some(3), 1, 5), (1, 2));
        assert_eq!(range_len(Some(-2), None, 1, 5), (3, 2));
        assert_eq!(range_len(None, None, -1, 5), (4, 5));
        assert_eq!(range_len(None, None, 2, 5), (0, 3));
        assert_eq!(range_len(Some(10), None, 1, 5), (5, 0));
        assert_eq!(range_len(Some(3), Some(0), -2, 5), (3, 2));
    }

    /// Python's `t[dims]` over `t`'s row-major elements, position by
    /// position: every axis's positions listed, then their product.
    fn slice_reference(
        t: &Tensor,
        dims: &[SliceDim],
    ) -> (Vec<usize>, feedstock::tensor::Data) {
        let in_dims = t.dims();
        let mut axes: Vec<Vec<usize>> = Vec::new();
        let mut out_dims = Vec::new();
        for (k, d) in dims.iter().enumerate() {
            match *d {
                SliceDim::At(i) => {
                    axes.push(vec![resolve_index(i, in_dims[k]).unwrap()])
                }
                SliceDim::Range { start, stop, step } => {
                    let (s, len) = range_len(start, stop, step, in_dims[k]);
                    let at = (0..len as i64).map(|i| (s + i * step) as usize);
                    axes.push(at.collect());
                    out_dims.push(len);
                }
                _ => unreachable!("the test draws At and Range only"),
            }
        }
        let mut flat = vec![0usize];
        for (k, at) in axes.iter().enumerate() {
            let inner: usize = in_dims[k + 1..].iter().product();
            flat = flat
                .iter()
                .flat_map(|f| at.iter().map(move |p| f + p * inner))
                .collect();
        }
        let rows = Tensor::from_data([t.num_elements()], t.data().clone())
            .unwrap()
            .unstack();
        let picked: Vec<Tensor> =
            flat.iter().map(|&f| rows[f].clone()).collect();
        let data = if picked.is_empty() {
            Tensor::zeros(t.dtype(), [0]).unwrap().data().clone()
        } else {
            Tensor::stack(&picked).unwrap().data().clone()
        };
        (out_dims, data)
    }

    fn slice_dim() -> impl proptest::strategy::Strategy<Value = SliceDim> {
        use proptest::prelude::*;
        let bound = proptest::option::of(-7i64..7);
        prop_oneof![
            (-5i64..5).prop_map(SliceDim::At),
            (bound.clone(), bound, prop_oneof![-3i64..0, 1i64..4]).prop_map(
                |(start, stop, step)| SliceDim::Range { start, stop, step }
            ),
        ]
    }

    proptest::proptest! {
        /// The strided copy behind `strided_slice` takes the elements
        /// Python's indexing takes, for any steps (negative ones
        /// included), odd extents and several dtypes.
        #[test]
        fn strided_slice_matches_the_reference(
            shape in proptest::collection::vec(0usize..6, 1..=4),
            dims in proptest::collection::vec(slice_dim(), 4),
            dtype in proptest::sample::select(vec![
                DType::U8, DType::I32, DType::F64, DType::Bool, DType::String,
            ]),
        ) {
            let n: usize = shape.iter().product();
            let dims = &dims[..shape.len()];
            let ok = dims.iter().zip(&shape).all(|(d, &len)| match *d {
                SliceDim::At(i) => resolve_index(i, len).is_ok(),
                _ => true,
            });
            proptest::prop_assume!(ok);
            let ints = Tensor::new(&shape[..], (0..n as i32).collect()).unwrap();
            let t = if dtype == DType::String {
                let s = ints.as_slice::<i32>().unwrap();
                let b = s.iter().map(|i| Bytes::from(i.to_string())).collect();
                Tensor::new(&shape[..], b).unwrap()
            } else {
                ints.cast(dtype).unwrap()
            };
            let got = strided_slice(&t, dims).unwrap();
            let (want_dims, want) = slice_reference(&t, dims);
            proptest::prop_assert_eq!(got.dims(), &want_dims[..]);
            proptest::prop_assert!(got.data() == &want);
        }
    }

    #[test]
    fn strided_slice_like_numpy() {
        let t = Tensor::new([2, 3], (0..6i32).collect()).unwrap();
        let col = strided_slice(
            &t,
            &[
                SliceDim::Range {
                    start: None,
                    stop: None,
                    step: 1,
                },
                SliceDim::At(-1),
            ],
        )
        .unwrap();
        assert_eq!(col.dims(), &[2]);
        assert_eq!(col.as_slice::<i32>().unwrap(), &[2, 5]);
        let rev = strided_slice(
            &t,
            &[
                SliceDim::Ellipsis,
                SliceDim::Range {
                    start: None,
                    stop: None,
                    step: -1,
                },
            ],
        )
        .unwrap();
        assert_eq!(rev.as_slice::<i32>().unwrap(), &[2, 1, 0, 5, 4, 3]);
        let row =
            strided_slice(&t, &[SliceDim::At(1), SliceDim::NewAxis]).unwrap();
        assert_eq!(row.dims(), &[1, 3]);
        assert!(strided_slice(&t, &[SliceDim::At(2)]).is_err());
    }

    #[test]
    fn stack_and_concat_on_inner_axes() {
        let a = Tensor::new([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let b = Tensor::new([2, 2], vec![5i32, 6, 7, 8]).unwrap();
        let s = stack_or_concat(&[a.clone(), b.clone()], 1, true).unwrap();
        assert_eq!(s.dims(), &[2, 2, 2]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[1, 2, 5, 6, 3, 4, 7, 8]);
        let s = stack_or_concat(&[a.clone(), b.clone()], -1, true).unwrap();
        assert_eq!(s.dims(), &[2, 2, 2]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[1, 5, 2, 6, 3, 7, 4, 8]);
        let c = stack_or_concat(&[a, b], 1, false).unwrap();
        assert_eq!(c.dims(), &[2, 4]);
        assert_eq!(c.as_slice::<i32>().unwrap(), &[1, 2, 5, 6, 3, 4, 7, 8]);
    }

    #[test]
    fn reshape_infers_minus_one() {
        assert_eq!(resolve_reshape(&[-1, 4], 12).unwrap(), vec![3, 4]);
        assert!(resolve_reshape(&[-1, 5], 12).is_err());
    }
}
