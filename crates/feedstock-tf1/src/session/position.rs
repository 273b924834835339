//! The input position of a session, for exact resume by replay.
//!
//! A graph whose input is deterministic (every runner a single thread,
//! every shuffle and random op seeded: see
//! [`Graph::input_nondeterminism`]) delivers the same elements in the same
//! order on every run. Its position is then how many steps the user's
//! runs made of each node that takes input (a batch, a dequeue, a read):
//! [`Session::input_position`]. A new session of the same graph resumes
//! there by making those steps again and dropping what they give
//! ([`Session::replay_input`]).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use feedstock::error::{Error, Kind, Result};

use super::Session;
use crate::graph::{Graph, Node, Op, Output};
use crate::queues::QueueKind;

impl Graph {
    /// Why the graph's input is not the same on every run, one reason a
    /// line naming the node: a batching stage or queue runner with more
    /// than one thread (their interleaving changes the order), a shuffle
    /// or random op without a seed. Empty when the input is
    /// deterministic, so that [`Session::input_position`] resumes it
    /// exactly.
    pub fn input_nondeterminism(&self) -> Vec<String> {
        let g = self.inner.read();
        let mut why = Vec::new();
        for n in &g.nodes {
            match &n.op {
                Op::Batch(spec) => {
                    let o = &spec.opts;
                    if spec.lists.len() > 1 {
                        why.push(format!(
                            "{} (a _join batch) runs {} threads, one per \
                             tensor list",
                            spec.name,
                            spec.lists.len()
                        ));
                    } else if o.num_threads > 1 {
                        why.push(format!(
                            "{} runs {} threads (num_threads={})",
                            spec.name, o.num_threads, o.num_threads
                        ));
                    }
                    if o.shuffle.as_ref().is_some_and(|s| s.seed.is_none()) {
                        why.push(format!(
                            "{} shuffles with no seed (give shuffle_batch a \
                             seed, or the graph one with tf.set_random_seed)",
                            spec.name
                        ));
                    }
                }
                Op::StringProducer { opts, .. }
                | Op::InputProducer { opts }
                | Op::RangeProducer { opts, .. }
                | Op::SliceProducer { opts }
                    if opts.shuffle && opts.seed.is_none() =>
                {
                    why.push(format!(
                        "{} shuffles with no seed (give it a seed, or the \
                         graph one with tf.set_random_seed)",
                        n.name
                    ));
                }
                Op::Queue {
                    kind: QueueKind::RandomShuffle { seed: None, .. },
                    ..
                } => why.push(format!(
                    "{} (a RandomShuffleQueue) has no seed",
                    n.name
                )),
                Op::Def(def) if def.seed() == Some(None) => why.push(format!(
                    "{} ({}) has no seed",
                    n.name,
                    def.op_type()
                )),
                _ => {}
            }
        }
        for r in &g.runners {
            if r.ops.len() > 1 {
                why.push(format!(
                    "the queue runner of {} runs {} threads (one per \
                     enqueue op)",
                    g.nodes[r.queue as usize].name,
                    r.ops.len()
                ));
            }
        }
        why
    }

    /// A description of the graph's input, one line a node: the
    /// producers (their file lists), readers, queues, batching stages
    /// (batch sizes, capacities, seeds) and seeded random ops, with their
    /// settings. Two graphs built the same way over the same files give
    /// the same text; a checkpoint of one is refused by the other when
    /// they differ.
    pub fn input_fingerprint(&self) -> String {
        let g = self.inner.read();
        let mut out = String::new();
        for n in &g.nodes {
            let input = n.is_resource() || n.takes_input();
            if !input {
                continue;
            }
            let _ = match &n.op {
                Op::Def(def) => {
                    writeln!(
                        out,
                        "{} {} seed={:?}",
                        n.name,
                        def.op_type(),
                        def.seed()
                    )
                }
                op => writeln!(out, "{} {op:?}", n.name),
            };
            for i in &n.inputs {
                let src: &Node = &g.nodes[i.node as usize];
                if matches!(src.op, Op::Constant(_)) && !n.takes_input() {
                    let _ = writeln!(out, "  {} {:?}", src.name, src.op);
                }
            }
        }
        out
    }
}

impl Session {
    /// How far the user's runs have read the input: for each node that
    /// takes elements from it (a batching stage, a dequeue, a read) and
    /// that a run used, its name and the steps of it the runs made. Runner
    /// threads' steps are not counted (replaying the user's steps makes
    /// them again).
    pub fn input_position(&self) -> Vec<(String, u64)> {
        let states = self.inner.states.lock().clone();
        let mut out = Vec::new();
        for (id, st) in states.iter().enumerate() {
            let n = st.taken.load(Ordering::SeqCst);
            if n > 0 {
                out.push((self.inner.graph.node(id as u32).name.clone(), n));
            }
        }
        out
    }

    /// Resumes at `position` (from [`Session::input_position`] of a
    /// session of the same graph): makes the steps counted there again,
    /// in node order, and drops what they give. Call it after the queue
    /// runners are started and before the first run.
    ///
    /// # Errors
    /// InvalidArgument for a name that is not a node taking input in this
    /// graph; OutOfRange, naming the node, when the input ends before the
    /// position (the checkpoint is of a longer input); any error of the
    /// runs.
    pub fn replay_input(&self, position: &[(String, u64)]) -> Result<()> {
        let mut steps: Vec<(Output, &str, u64)> = Vec::new();
        for (name, n) in position {
            let out = self.inner.graph.output_by_name(name, 0);
            let node = out.map(|o| self.inner.graph.node(o.node));
            match (out, node) {
                (Some(o), Some(node)) if node.takes_input() => {
                    steps.push((o, name, *n));
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "the input position names {name}, which is not a \
                         node of this graph that reads input"
                    )))
                }
            }
        }
        steps.sort_by_key(|(o, _, _)| o.node);
        for (o, name, n) in steps {
            for k in 0..n {
                if let Err(e) = self.inner.run(&[o], &[], None, None) {
                    let msg = format!(
                        "resuming the input at step {n} of {name} failed at \
                         step {k}: {e}"
                    );
                    return Err(match e.kind() {
                        Kind::OutOfRange => Error::out_of_range(msg),
                        _ => Error::new(e.kind(), msg),
                    });
                }
            }
        }
        Ok(())
    }
}
