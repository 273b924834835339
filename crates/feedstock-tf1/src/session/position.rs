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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use feedstock::error::{Error, Kind, Result};

use super::Session;
use crate::graph::{Graph, Node, Op, Output};
use crate::queues::QueueKind;

impl Node {
    /// Whether a step of the node takes elements from the input (a
    /// dequeue, a read, a batch): what a checkpoint counts and a restore
    /// replays.
    pub(crate) fn takes_input(&self) -> bool {
        matches!(
            self.op,
            Op::SliceProducer { .. }
                | Op::Dequeue { .. }
                | Op::DequeueMany { .. }
                | Op::Read { .. }
                | Op::ReadUpTo { .. }
                | Op::Batch(_)
        )
    }
}

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
        // Each thread's stage, and the queues and readers it takes from.
        let mut stages: Vec<(String, BTreeSet<u32>)> = Vec::new();
        for r in &g.runners {
            if r.ops.len() > 1 {
                why.push(format!(
                    "the queue runner of {} runs {} threads (one per \
                     enqueue op)",
                    g.nodes[r.queue as usize].name,
                    r.ops.len()
                ));
            }
            let name = format!(
                "the queue runner of {}",
                g.nodes[r.queue as usize].name
            );
            stages.push((name, taken_from(&g.nodes, &r.ops)));
        }
        for n in &g.nodes {
            if let Op::Batch(spec) = &n.op {
                let mut outs: Vec<Output> = spec.lists.concat();
                outs.extend(spec.keep_input);
                stages.push((n.name.clone(), taken_from(&g.nodes, &outs)));
            }
        }
        // Two stages taking from one queue or reader, each in its own
        // thread, share its elements in the order the threads get there.
        let mut readers: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
        for (name, from) in &stages {
            for &r in from {
                readers.entry(r).or_default().push(name);
            }
        }
        for (r, names) in readers {
            if names.len() > 1 {
                why.push(format!(
                    "{} is read by {} threads ({})",
                    g.nodes[r as usize].name,
                    names.len(),
                    names.join(", ")
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

/// The queues, readers and batching stages that evaluating `outs` takes
/// elements from (not looking past a batching stage, whose own threads
/// fill it).
fn taken_from(nodes: &[Arc<Node>], outs: &[Output]) -> BTreeSet<u32> {
    let mut seen = BTreeSet::new();
    let mut from = BTreeSet::new();
    let mut todo: Vec<u32> = outs.iter().map(|o| o.node).collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let n = &nodes[id as usize];
        match &n.op {
            Op::Batch(_) | Op::SliceProducer { .. } => {
                from.insert(id);
                continue;
            }
            op if n.takes_input() || matches!(op, Op::LimitEpochs { .. }) => {
                from.extend(n.uses());
                if matches!(op, Op::LimitEpochs { .. }) {
                    from.insert(id);
                }
            }
            _ => {}
        }
        todo.extend(n.reads().map(|o| o.node));
    }
    from
}

impl Session {
    /// How far the user's runs have read the input: for each node that
    /// takes elements from it (a batching stage, a dequeue, a read) and
    /// that a run used, its name and the steps of it the runs made. Runner
    /// threads' steps are not counted (replaying the user's steps makes
    /// them again).
    ///
    /// # Errors
    /// FailedPrecondition when two of those nodes take from one queue or
    /// reader: how their steps interleaved is not kept, so a replay could
    /// not give each the elements it had.
    pub fn input_position(&self) -> Result<Vec<(String, u64)>> {
        let states = self.inner.states.lock().clone();
        let g = self.inner.graph.inner.read();
        let mut out = Vec::new();
        let mut from: BTreeMap<u32, &str> = BTreeMap::new();
        for (id, st) in states.iter().enumerate() {
            let n = st.taken.load(Ordering::SeqCst);
            if n == 0 {
                continue;
            }
            let node = &g.nodes[id];
            for r in node.uses() {
                if let Some(other) = from.insert(r, &node.name) {
                    return Err(Error::failed_precondition(format!(
                        "{other} and {} both take from {}: the input \
                         position cannot say in which order, so it cannot \
                         be saved",
                        node.name, g.nodes[r as usize].name
                    )));
                }
            }
            out.push((node.name.clone(), n));
        }
        Ok(out)
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
        {
            let g = self.inner.graph.inner.read();
            for (name, n) in position {
                let mut found = g
                    .nodes
                    .iter()
                    .filter(|node| node.takes_input() && &node.name == name);
                let (Some(node), None) = (found.next(), found.next()) else {
                    return Err(Error::invalid_argument(format!(
                        "the input position names {name}, which is not one \
                         node of this graph that reads input"
                    )));
                };
                let Some(info) = node.outputs.first() else {
                    return Err(Error::invalid_argument(format!(
                        "the input position names {name}, which has no \
                         output to replay"
                    )));
                };
                let o = Output {
                    node: node.id,
                    index: 0,
                    dtype: info.dtype,
                    sparse: info.sparse,
                };
                steps.push((o, name, *n));
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
