//! The order in which a run's nodes are evaluated, with the branches of
//! each `tf.cond` ([`crate::op::Cond`]) laid out so that only the chosen
//! one runs.
//!
//! A cond in a list of steps is
//!
//! ```text
//! Switch(else) [true branch's steps] Jump(end) [false branch's steps] Merge
//! ```
//!
//! The switch evaluates the predicate and, when it is false, jumps to
//! the false branch; the true branch ends with a jump over the false
//! one; the merge gives the chosen branch's outputs. A branch's steps
//! are the nodes its function made (the id range its cond names) that
//! its outputs need; the nodes they read from outside the branch are
//! evaluated before the switch, whichever branch is chosen (as in
//! TensorFlow, where only the ops made inside a branch are conditional).
//! Conds nest: an inner cond's steps lie inside its outer branch.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use feedstock::error::{Error, Result};

use super::graph::{Node, Op, Output};
use super::Graph;
use crate::op::Cond;

impl Graph {
    /// `tf.cond`: the outputs of `true_fn` when the predicate `pred` holds
    /// when run, else those of `false_fn`. Each function adds its
    /// branch's nodes to the graph and returns its outputs (as many, of
    /// the same dtypes, in both); the nodes a function adds run only when
    /// its branch is chosen. The outputs' static shapes are the most
    /// specific shapes compatible with both branches'.
    ///
    /// ```
    /// use feedstock_tf1::op::{Binary, Compare};
    /// use feedstock::decode::math::BinaryOp;
    /// use feedstock::decode::reduce::CmpOp;
    /// use feedstock_tf1::{Graph, Session};
    /// use feedstock::{DType, Tensor};
    ///
    /// let g = Graph::new();
    /// let x = g.placeholder(DType::I64, None, Some("x"))?;
    /// let zero = g.scalar(0.0, DType::I64)?;
    /// let pos = g.op1(Compare { op: CmpOp::Greater }, &[x, zero])?;
    /// let y = g.cond(
    ///     pos,
    ///     |g| Ok(vec![g.op1(Binary { op: BinaryOp::Mul }, &[x, x])?]),
    ///     |g| Ok(vec![g.scalar(-1.0, DType::I64)?]),
    /// )?;
    /// let sess = Session::new(&g);
    /// let got = sess.run(&y, &[(x, Tensor::scalar(3i64).into())])?;
    /// assert_eq!(got[0].dense()?.scalar_value::<i64>()?, 9);
    /// # Ok::<(), feedstock::Error>(())
    /// ```
    ///
    /// # Errors
    /// What the functions return; InvalidArgument for branches with
    /// different numbers of outputs or a sparse output, InvalidDtype for
    /// outputs of different dtypes.
    pub fn cond(
        &self,
        pred: Output,
        true_fn: impl FnOnce(&Graph) -> Result<Vec<Output>>,
        false_fn: impl FnOnce(&Graph) -> Result<Vec<Output>>,
    ) -> Result<Vec<Output>> {
        let lo = self.len();
        let t = true_fn(self)?;
        let mid = self.len();
        let f = false_fn(self)?;
        let hi = self.len();
        if t.len() != f.len() {
            return Err(Error::invalid_argument(format!(
                "tf.cond: the true branch has {} outputs, the false branch {}",
                t.len(),
                f.len()
            )));
        }
        let mut inputs = vec![pred];
        inputs.extend(t);
        inputs.extend(f);
        self.op(
            Cond {
                branches: vec![lo, mid, mid, hi],
            },
            &inputs,
        )
    }
}

/// One entry of the evaluation order; an entry's position is its step's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// Evaluate this node.
    Node(u32),
    /// Evaluate the predicate of this cond; when false, go on at
    /// `else_at`.
    Switch { cond: u32, else_at: u32 },
    /// The true branch of this cond is done: go on at `to` (its merge).
    Jump { cond: u32, to: u32 },
    /// This cond's outputs: the chosen branch's, as the switch at
    /// `switch` chose.
    Merge { cond: u32, switch: u32 },
}

/// Where a node is evaluated: unconditionally (`None`) or in branch `.1`
/// of the cond `.0`.
type Scope = Option<(u32, usize)>;

/// The evaluation order of the nodes `targets` need, every node after
/// those it reads; the outputs in `fed` are given, and need nothing.
///
/// # Errors
/// InvalidArgument for a target of another graph, or a node made inside
/// a cond's branch that is fetched or read outside that branch; Internal
/// for a cycle.
pub(crate) fn order(
    nodes: &[Arc<Node>],
    targets: &[Output],
    fed: &[Output],
) -> Result<Vec<Item>> {
    let mut branches = HashMap::new();
    for n in nodes {
        if let Op::Def(def) = &n.op {
            if let Some(b) = def.branches() {
                branches.insert(n.id, b);
            }
        }
    }
    // Each node's innermost branch: outer conds (made later, so with
    // larger ids) first, inner ones overwriting them.
    let mut conds: Vec<u32> = branches.keys().copied().collect();
    conds.sort_unstable_by(|a, b| b.cmp(a));
    let mut home = HashMap::new();
    for &c in &conds {
        for (k, r) in branches[&c].iter().enumerate() {
            for id in r.clone() {
                home.insert(id, (c, k));
            }
        }
    }
    let mut roots = Vec::new();
    for t in targets {
        let node = nodes.get(t.node as usize).ok_or_else(|| {
            Error::invalid_argument("fetch of another graph")
        })?;
        if fed.contains(t) || matches!(node.op, Op::Constant(_)) {
            continue;
        }
        roots.push(t.node);
    }
    let mut plan = Plan {
        nodes,
        fed,
        branches,
        home,
        items: Vec::new(),
        mark: HashMap::new(),
    };
    plan.emit(None, roots)?;
    Ok(plan.items)
}

struct Plan<'g> {
    nodes: &'g [Arc<Node>],
    fed: &'g [Output],
    branches: HashMap<u32, [Range<u32>; 2]>,
    home: HashMap<u32, (u32, usize)>,
    items: Vec<Item>,
    /// false: being visited; true: placed.
    mark: HashMap<u32, bool>,
}

impl Plan<'_> {
    /// Whether the output is given (fed, or a constant's value).
    fn given(&self, o: &Output) -> bool {
        self.fed.contains(o)
            || matches!(self.nodes[o.node as usize].op, Op::Constant(_))
    }

    /// Whether a step of the node evaluates its inputs.
    fn follows(&self, n: &Node) -> bool {
        let fully_fed = (0..n.outputs.len()).all(|i| {
            self.fed
                .iter()
                .any(|f| f.node == n.id && f.index as usize == i)
        });
        n.steps_inputs() && !fully_fed
    }

    /// Whether node `id` was made within scope `s`.
    fn within(&self, id: u32, s: Scope) -> bool {
        match s {
            None => true,
            Some((c, k)) => self.branches[&c][k].contains(&id),
        }
    }

    /// The outputs of branch `k` of cond `c`.
    fn branch_outputs(&self, c: u32, k: usize) -> &[Output] {
        let ins = &self.nodes[c as usize].inputs;
        let n = Cond::arity(ins.len());
        &ins[1 + k * n..1 + (k + 1) * n]
    }

    /// The nodes from outside cond `c`'s branches that they read: they
    /// are evaluated before its switch.
    fn frontier(&self, c: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for k in 0..2 {
            let range = self.branches[&c][k].clone();
            let mut stack: Vec<Output> = self.branch_outputs(c, k).to_vec();
            while let Some(o) = stack.pop() {
                if self.given(&o) {
                    continue;
                }
                if !range.contains(&o.node) {
                    if !out.contains(&o.node) {
                        out.push(o.node);
                    }
                    continue;
                }
                if seen.insert(o.node) {
                    let n = &self.nodes[o.node as usize];
                    if self.follows(n) {
                        stack.extend(n.inputs.iter().copied());
                    }
                }
            }
        }
        out
    }

    /// The nodes a step of `id` reads: a cond's predicate and what its
    /// branches read from outside them; another node's inputs.
    fn deps(&self, id: u32) -> Vec<u32> {
        let n = &self.nodes[id as usize];
        if !self.follows(n) {
            return Vec::new();
        }
        if self.branches.contains_key(&id) {
            let mut d: Vec<u32> = n.inputs[..1]
                .iter()
                .filter(|o| !self.given(o))
                .map(|o| o.node)
                .collect();
            d.extend(self.frontier(id));
            return d;
        }
        n.inputs
            .iter()
            .filter(|o| !self.given(o))
            .map(|o| o.node)
            .collect()
    }

    /// Refuses node `id`, made within scope `s`, if it was made inside a
    /// branch nested in `s`: it exists only when that branch runs.
    fn check_home(&self, id: u32, s: Scope) -> Result<()> {
        match self.home.get(&id).copied() {
            h if h == s => Ok(()),
            _ => Err(self.outside(id)),
        }
    }

    /// The error for node `id` read outside the branch that made it.
    fn outside(&self, id: u32) -> Error {
        let c = self.home.get(&id).map_or(id, |h| h.0);
        Error::invalid_argument(format!(
            "{} was made inside a branch of the tf.cond {} and cannot be \
             fetched or used outside that branch",
            self.nodes[id as usize].name, self.nodes[c as usize].name
        ))
    }

    /// Places the nodes `roots` need in scope `s`, depth-first in
    /// post-order; nodes made outside `s` must be placed already.
    fn emit(&mut self, s: Scope, roots: Vec<u32>) -> Result<()> {
        let mut stack: Vec<(u32, bool)> = Vec::new();
        for r in roots {
            if !self.within(r, s) {
                self.check_placed(r, s)?;
                continue;
            }
            self.check_home(r, s)?;
            stack.push((r, false));
        }
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                if self.mark.get(&id) == Some(&false) {
                    self.mark.insert(id, true);
                    self.place(id)?;
                }
                continue;
            }
            if self.mark.contains_key(&id) {
                continue;
            }
            self.mark.insert(id, false);
            stack.push((id, true));
            for d in self.deps(id) {
                if !self.within(d, s) {
                    self.check_placed(d, s)?;
                    continue;
                }
                self.check_home(d, s)?;
                match self.mark.get(&d) {
                    Some(false) => {
                        return Err(Error::internal("the graph has a cycle"))
                    }
                    Some(true) => {}
                    None => stack.push((d, false)),
                }
            }
        }
        Ok(())
    }

    /// A node read in scope `s` but made outside it must have been made
    /// in a scope enclosing `s` (not in another branch), and be placed.
    fn check_placed(&self, id: u32, s: Scope) -> Result<()> {
        let h = self.home.get(&id).copied();
        let mut a = s;
        while a != h {
            match a {
                None => return Err(self.outside(id)),
                Some((c, _)) => a = self.home.get(&c).copied(),
            }
        }
        match self.mark.get(&id) {
            Some(true) => Ok(()),
            _ => Err(Error::internal("the graph has a cycle")),
        }
    }

    /// Appends node `id`'s item(s): a cond's switch, branches, jump and
    /// merge, another node's one step.
    fn place(&mut self, id: u32) -> Result<()> {
        if !self.branches.contains_key(&id) {
            self.items.push(Item::Node(id));
            return Ok(());
        }
        let at = |items: &Vec<Item>| items.len() as u32;
        let switch = at(&self.items);
        self.items.push(Item::Switch {
            cond: id,
            else_at: 0,
        });
        let roots = self.branch_roots(id, 0);
        self.emit(Some((id, 0)), roots)?;
        let jump = at(&self.items);
        self.items.push(Item::Jump { cond: id, to: 0 });
        let else_at = at(&self.items);
        let roots = self.branch_roots(id, 1);
        self.emit(Some((id, 1)), roots)?;
        let merge = at(&self.items);
        self.items.push(Item::Merge { cond: id, switch });
        self.items[switch as usize] = Item::Switch { cond: id, else_at };
        self.items[jump as usize] = Item::Jump {
            cond: id,
            to: merge,
        };
        Ok(())
    }

    fn branch_roots(&self, c: u32, k: usize) -> Vec<u32> {
        self.branch_outputs(c, k)
            .iter()
            .filter(|o| !self.given(o))
            .map(|o| o.node)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Binary;
    use feedstock::decode::math::BinaryOp;
    use feedstock::DType;

    #[test]
    fn a_cond_is_laid_out_as_switch_branch_jump_branch_merge() -> Result<()> {
        let g = Graph::new();
        let p = g.placeholder(DType::Bool, None, Some("p"))?;
        let x = g.placeholder(DType::I64, None, Some("x"))?;
        let outside = g.op1(Binary { op: BinaryOp::Add }, &[x, x])?;
        let made = std::cell::RefCell::new(Vec::new());
        let branch = |op: BinaryOp| {
            let made = &made;
            move |g: &Graph| {
                let o = g.op1(Binary { op }, &[outside, x])?;
                made.borrow_mut().push(o.node);
                Ok(vec![o])
            }
        };
        let out = g.cond(p, branch(BinaryOp::Mul), branch(BinaryOp::Sub))?;
        let made = made.into_inner();
        let c = out[0].node;
        let nodes = g.inner.read().nodes.clone();
        let items = order(&nodes, &out, &[p, x])?;
        assert_eq!(
            items,
            vec![
                Item::Node(outside.node),
                Item::Switch {
                    cond: c,
                    else_at: 4
                },
                Item::Node(made[0]),
                Item::Jump { cond: c, to: 5 },
                Item::Node(made[1]),
                Item::Merge { cond: c, switch: 1 },
            ]
        );
        // Fed, the cond needs nothing.
        assert_eq!(order(&nodes, &out, &out)?, vec![]);
        Ok(())
    }
}
