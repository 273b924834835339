//! A graph as a pure function of one example: [`GraphFn`], which a
//! [`Dataset`](feedstock::dataset::Dataset) runs per example in its reader
//! threads (`feedstock.Pipeline(map=...)` builds one from the map
//! function's graph).

use std::collections::BTreeSet;
use std::fmt;

use super::graph::{Node, Op};
use super::{Callable, Graph, Output, Session};
use feedstock::dataset::source::Fnv;
use feedstock::error::{Error, Result};
use feedstock::tensor::{Data, Value};

/// The part of a graph between some placeholders (the example's
/// components, fed) and some outputs (the new components), run as a
/// function: [`call`](Self::call) evaluates the outputs for one example.
///
/// Only a pure function of the example is accepted: the subgraph may
/// hold no queue, reader, producer, variable, random generator or
/// user function (each keeps state between runs, or needs Python), so
/// that a resumed pipeline computes again exactly what it computed the
/// first time, whichever reader thread runs which example.
///
/// ```
/// use feedstock_tf1::op::Binary;
/// use feedstock_tf1::{Graph, GraphFn};
/// use feedstock_tf1::kernels::math::BinaryOp;
/// use feedstock::queue::PartialShape;
/// use feedstock::{DType, Tensor, Value};
///
/// let g = Graph::new();
/// let x = g.placeholder(DType::I64, Some(PartialShape::scalar()), Some("x"))?;
/// let two = g.scalar(2.0, DType::I64)?;
/// let y = g.op1(Binary { op: BinaryOp::Mul }, &[x, two])?;
/// let f = GraphFn::new(&g, &[x], &[y])?;
/// let out = f.call(vec![Value::Dense(Tensor::scalar(21i64))])?;
/// assert_eq!(out[0].dense()?.scalar_value::<i64>()?, 42);
/// # Ok::<(), feedstock::Error>(())
/// ```
pub struct GraphFn {
    callable: Callable,
    inputs: Vec<Output>,
    outputs: Vec<Output>,
    fingerprint: u64,
}

impl fmt::Debug for GraphFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphFn")
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .finish()
    }
}

impl GraphFn {
    /// The function from the values of `inputs` (placeholders of
    /// `graph`) to those of `outputs`.
    ///
    /// # Errors
    ///
    /// [`FailedPrecondition`](feedstock::Kind::FailedPrecondition) naming
    /// the node when the outputs depend on state kept between runs (a
    /// queue, a reader, a producer, a variable, a random op) or on a
    /// user function; [`InvalidArgument`](feedstock::Kind::InvalidArgument)
    /// for an input that is not a placeholder, or a placeholder the
    /// outputs read that is not among the inputs.
    pub fn new(
        graph: &Graph,
        inputs: &[Output],
        outputs: &[Output],
    ) -> Result<GraphFn> {
        for &i in inputs {
            let node = graph.node(i.node);
            if !matches!(node.op, Op::Placeholder) {
                return Err(Error::invalid_argument(format!(
                    "the input {} of a graph function must be a placeholder",
                    node.name
                )));
            }
        }
        let fed: BTreeSet<u32> = inputs.iter().map(|o| o.node).collect();
        let mut seen = BTreeSet::new();
        let mut todo: Vec<u32> = outputs.iter().map(|o| o.node).collect();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) || fed.contains(&id) {
                continue;
            }
            let node = graph.node(id);
            if let Some(why) = impure(&node) {
                return Err(Error::failed_precondition(format!(
                    "{} ({}) {why}",
                    node.name,
                    op_name(&node.op)
                )));
            }
            if matches!(node.op, Op::Placeholder) {
                return Err(Error::invalid_argument(format!(
                    "the graph function reads the placeholder {}, which is \
                     not one of its inputs",
                    node.name
                )));
            }
            todo.extend(node.reads().map(|o| o.node));
        }
        let mut h = Fnv::default();
        h.bytes(b"graph_fn");
        for o in inputs.iter().chain(outputs) {
            h.u64(u64::from(o.node));
            h.u64(u64::from(o.index));
        }
        for &id in seen.iter().chain(&fed) {
            fingerprint_node(&graph.node(id), graph, &mut h);
        }
        let callable = Session::new(graph).make_callable(outputs, inputs)?;
        Ok(GraphFn {
            callable,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            fingerprint: h.finish(),
        })
    }

    /// The outputs' values for one example, whose components are fed to
    /// the inputs in order.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](feedstock::Kind::InvalidArgument) for the wrong
    /// number of components, or one of the wrong dtype or shape; those
    /// of the ops.
    pub fn call(&self, example: Vec<Value>) -> Result<Vec<Value>> {
        if example.len() != self.inputs.len() {
            return Err(Error::invalid_argument(format!(
                "the graph function takes {} components, the example has {}",
                self.inputs.len(),
                example.len()
            )));
        }
        self.callable.call(example)
    }

    /// A hash of the subgraph (its ops, their settings and constants,
    /// how they connect), the same in every process that builds the same
    /// graph: what a checkpoint of a pipeline running it records.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

const RANDOM: &str = "draws random numbers from a generator shared by every \
                      example, so its values depend on which examples came \
                      before";

/// Why a node cannot be part of a pure function, if it cannot.
fn impure(node: &Node) -> Option<&'static str> {
    Some(match &node.op {
        Op::Def(def) if def.seed().is_some() => RANDOM,
        Op::Call(_) => {
            "runs a user function, which the reader threads cannot run"
        }
        Op::Variable | Op::Assign { .. } => "reads or sets a variable",
        Op::Batch(_)
        | Op::Queue { .. }
        | Op::Dequeue { .. }
        | Op::DequeueMany { .. }
        | Op::Enqueue { .. }
        | Op::QueueClose { .. }
        | Op::QueueSize { .. }
        | Op::QueueIsClosed { .. } => "uses a queue",
        Op::Reader(_)
        | Op::Read { .. }
        | Op::ReadUpTo { .. }
        | Op::ReaderState { .. } => "uses a reader",
        Op::MatchFilenames { .. }
        | Op::StringProducer { .. }
        | Op::InputProducer { .. }
        | Op::RangeProducer { .. }
        | Op::SliceProducer { .. }
        | Op::LimitEpochs { .. } => "is a producer",
        _ => return None,
    })
}

/// The op's variant name (its Debug form up to the first brace).
fn op_name(op: &Op) -> String {
    if let Op::Def(def) = op {
        return def.op_type().to_owned();
    }
    let s = format!("{op:?}");
    s.split(['(', ' ', '{']).next().unwrap_or("").to_owned()
}

/// Feeds a node into `h`: its op with settings and constants in full
/// (not a Debug form that elides, nor one holding hash maps), its
/// inputs and its outputs' dtypes and shapes.
fn fingerprint_node(node: &Node, graph: &Graph, h: &mut Fnv) {
    h.u64(u64::from(node.id));
    match &node.op {
        Op::Constant(v) => {
            h.bytes(b"Constant");
            fingerprint_value(v, h);
        }
        op => h.bytes(format!("{op:?}").as_bytes()),
    }
    for i in &node.inputs {
        h.u64(u64::from(i.node));
        h.u64(u64::from(i.index));
    }
    for (k, out) in node.outputs.iter().enumerate() {
        h.bytes(out.dtype.name().as_bytes());
        h.u64(u64::from(out.sparse));
        let o = Output {
            node: node.id,
            index: k as u32,
            dtype: out.dtype,
            sparse: out.sparse,
        };
        h.bytes(format!("{:?}", graph.shape(o)).as_bytes());
    }
}

fn fingerprint_value(v: &Value, h: &mut Fnv) {
    match v {
        Value::Dense(t) => fingerprint_tensor(t, h),
        Value::Sparse(s) => {
            fingerprint_tensor(s.indices(), h);
            fingerprint_tensor(s.values(), h);
            h.bytes(format!("{:?}", s.dims()).as_bytes());
        }
    }
}

fn fingerprint_tensor(t: &feedstock::Tensor, h: &mut Fnv) {
    h.bytes(t.dtype().name().as_bytes());
    h.bytes(format!("{:?}", t.dims()).as_bytes());
    match t.data() {
        Data::String(v) => v.iter().for_each(|s| h.bytes(s)),
        Data::Bool(v) => v.iter().for_each(|&b| h.u64(u64::from(b))),
        d => h.bytes(d.pod_bytes().unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::math::BinaryOp;
    use crate::op::{
        parse_sequence, Binary, Parse, ParseSequence, RandomUniform,
    };
    use crate::Graph;
    use feedstock::decode::example::FeatureSpec;
    use feedstock::queue::PartialShape;
    use feedstock::{DType, Kind, Tensor};

    fn doubler(factor: f64) -> (Graph, Output, Output) {
        let g = Graph::new();
        let x = g
            .placeholder(DType::I64, Some(PartialShape::scalar()), None)
            .unwrap();
        let k = g.scalar(factor, DType::I64).unwrap();
        let y = g.op1(Binary { op: BinaryOp::Mul }, &[x, k]).unwrap();
        (g, x, y)
    }

    #[test]
    fn evaluates_the_outputs_of_the_fed_example() {
        let (g, x, y) = doubler(3.0);
        let f = GraphFn::new(&g, &[x], &[y, x]).unwrap();
        let out = f.call(vec![Value::Dense(Tensor::scalar(5i64))]).unwrap();
        assert_eq!(out[0].dense().unwrap().scalar_value::<i64>().unwrap(), 15);
        assert_eq!(out[1].dense().unwrap().scalar_value::<i64>().unwrap(), 5);
        let e = f.call(vec![]).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
    }

    #[test]
    fn the_fingerprint_is_of_the_graph_not_of_the_build() {
        let a = doubler(3.0);
        let b = doubler(3.0);
        let c = doubler(4.0);
        let fp = |(g, x, y): &(Graph, Output, Output)| {
            GraphFn::new(g, &[*x], &[*y]).unwrap().fingerprint()
        };
        assert_eq!(fp(&a), fp(&b));
        assert_ne!(fp(&a), fp(&c));
    }

    /// A parse of a string scalar with features `f0..f15`, the last with
    /// default `default`, and a sequence parse whose feature list is
    /// `steps`.
    fn parser(default: i64, steps: &str) -> (Graph, Output, Vec<Output>) {
        let mut b = FeatureSpec::builder();
        for k in 0..15 {
            b.var_len(format!("f{k}"), DType::I64);
        }
        b.fixed_with_default("f15", DType::I64, [], Tensor::scalar(default));
        let spec = b.build().unwrap();
        let g = Graph::new();
        let s = g
            .placeholder(DType::String, Some(PartialShape::scalar()), None)
            .unwrap();
        let mut outs = g
            .op(
                Parse {
                    spec,
                    batched: false,
                },
                &[s],
            )
            .unwrap();
        let lists = FeatureSpec::builder()
            .var_len(steps, DType::F32)
            .build()
            .unwrap();
        let context = FeatureSpec::builder()
            .fixed("id", DType::I64, [])
            .build()
            .unwrap();
        let def = ParseSequence {
            context,
            sequence: lists,
            batched: false,
        };
        outs.extend(parse_sequence(&g, s, def).unwrap().context);
        (g, s, outs)
    }

    #[test]
    fn the_fingerprint_of_a_parse_is_of_its_specs_in_full() {
        let fp = |(g, s, outs): &(Graph, Output, Vec<Output>)| {
            GraphFn::new(g, &[*s], outs).unwrap().fingerprint()
        };
        // Equal specs built apart (their lookup tables hashed apart).
        let a = fp(&parser(7, "steps"));
        assert_eq!(a, fp(&parser(7, "steps")));
        assert_eq!(a, fp(&parser(7, "steps")));
        assert_ne!(a, fp(&parser(8, "steps")));
        assert_ne!(a, fp(&parser(7, "frames")));
    }

    #[test]
    fn state_between_examples_is_refused_naming_the_node() {
        let g = Graph::new();
        let x = g
            .placeholder(DType::F32, Some(PartialShape::new([Some(4)])), None)
            .unwrap();
        let uniform = RandomUniform {
            dims: vec![4],
            dtype: DType::F32,
            min: 0.0,
            max: 1.0,
            seed: Some(3),
        };
        let r = g.op1(uniform, &[]).unwrap();
        let y = g.op1(Binary { op: BinaryOp::Add }, &[x, r]).unwrap();
        let e = GraphFn::new(&g, &[x], &[y]).unwrap_err();
        assert_eq!(e.kind(), Kind::FailedPrecondition);
        assert!(e.to_string().contains("RandomUniform"), "{e}");
        let e = GraphFn::new(&g, &[], &[y]).unwrap_err();
        assert_eq!(e.kind(), Kind::FailedPrecondition);
        let unfed = doubler(2.0);
        let e = GraphFn::new(&unfed.0, &[], &[unfed.2]).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.to_string().contains("placeholder"), "{e}");
    }
}
