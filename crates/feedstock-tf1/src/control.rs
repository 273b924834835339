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
use feedstock::tensor::{Tensor, Value};

use super::graph::{Node, Op, Output};
use super::Graph;
use crate::op::control::{truth, Control};
use crate::op::{Cond, LoopVar, While};

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
    /// use feedstock_tf1::kernels::math::BinaryOp;
    /// use feedstock_tf1::kernels::reduce::CmpOp;
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

impl Graph {
    /// `tf.while_loop`: the loop variables start as `inits`; while
    /// `cond_fn` of them holds when run, they become what `body_fn` of
    /// them gives. Each function is called once, with the variables as
    /// they are in an iteration, adds its nodes and returns its outputs
    /// (a bool scalar; as many values as variables, of their dtypes and
    /// shape invariants, here the first values' shapes). The loop's
    /// outputs are the variables' values when the condition fails.
    ///
    /// # Errors
    /// What the functions return; InvalidArgument for a body giving
    /// another number of values, or a value of another shape;
    /// InvalidDtype for another dtype, or a condition that is not bool.
    pub fn while_loop(
        &self,
        inits: &[Output],
        cond_fn: impl FnOnce(&Graph, &[Output]) -> Result<Output>,
        body_fn: impl FnOnce(&Graph, &[Output]) -> Result<Vec<Output>>,
    ) -> Result<Vec<Output>> {
        let lo = self.len();
        let vars = inits
            .iter()
            .map(|&o| {
                let shape = self.shape(o).map(|s| {
                    s.dims()
                        .iter()
                        .map(|d| d.map_or(-1, |d| d as i64))
                        .collect()
                });
                self.op1(
                    LoopVar {
                        dtype: o.dtype(),
                        shape,
                    },
                    &[],
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let pred = cond_fn(self, &vars)?;
        let next = body_fn(self, &vars)?;
        let hi = self.len();
        if next.len() != vars.len() {
            return Err(Error::invalid_argument(format!(
                "tf.while_loop: {} loop variables, but the body gives {}",
                vars.len(),
                next.len()
            )));
        }
        for (i, (&v, &x)) in vars.iter().zip(&next).enumerate() {
            if let (Some(want), Some(got)) = (self.shape(v), self.shape(x)) {
                let fits = want.rank() == got.rank()
                    && want
                        .dims()
                        .iter()
                        .zip(got.dims())
                        .all(|(w, g)| w.is_none() || w == g);
                if !fits {
                    return Err(Error::invalid_argument(format!(
                        "tf.while_loop: loop variable {i} enters the loop \
                         with shape {want}, but has shape {got} after one \
                         iteration"
                    )));
                }
            }
        }
        let mut inputs = inits.to_vec();
        inputs.push(pred);
        inputs.extend(next);
        self.op(
            While {
                body: vec![lo, hi],
                vars: vars.len(),
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
    /// Start the while loop `w`: its variables take their first values
    /// (kept in this step's slot, where its `LoopVar`s read them).
    Enter { w: u32 },
    /// Evaluate the loop's condition; when false, go on at `exit_at`.
    Test { w: u32, exit_at: u32 },
    /// The body is done: the variables (in the slot of the step at
    /// `enter`) take their next values; go on at `to` (the condition).
    Next { w: u32, enter: u32, to: u32 },
    /// The loop's outputs: its variables' last values (at `enter`).
    Exit { w: u32, enter: u32 },
}

/// Where a node is evaluated: unconditionally (`None`), in branch `.1`
/// of the cond `.0`, or in the while loop `.0` (`.1` is 0).
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
    let mut branches: HashMap<u32, Vec<Range<u32>>> = HashMap::new();
    let mut loops = HashMap::new();
    for n in nodes {
        let Op::Def(def) = &n.op else { continue };
        match def.control() {
            Some(Control::Cond(b)) => {
                branches.insert(n.id, b.to_vec());
            }
            Some(Control::While { body, vars }) => {
                branches.insert(n.id, vec![body]);
                loops.insert(n.id, vars);
            }
            None => {}
        }
    }
    // Each node's innermost branch or loop: outer ones (made later, so
    // with larger ids) first, inner ones overwriting them.
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
        loops,
        home,
        items: Vec::new(),
        mark: HashMap::new(),
    };
    plan.emit(None, roots)?;
    Ok(plan.items)
}

/// The ids of the `LoopVar` nodes of the while loop node `w`.
pub(crate) fn loop_vars(w: &Node) -> Range<u32> {
    match &w.op {
        Op::Def(def) => match def.control() {
            Some(Control::While { body, vars }) => {
                body.start..body.start + vars as u32
            }
            _ => 0..0,
        },
        _ => 0..0,
    }
}

struct Plan<'g> {
    nodes: &'g [Arc<Node>],
    fed: &'g [Output],
    branches: HashMap<u32, Vec<Range<u32>>>,
    /// The while loops among `branches`, with their numbers of variables.
    loops: HashMap<u32, usize>,
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

    /// The outputs of branch `k` of cond `c`; of a while loop `c`, its
    /// condition and next values.
    fn branch_outputs(&self, c: u32, k: usize) -> &[Output] {
        let ins = &self.nodes[c as usize].inputs;
        if let Some(&n) = self.loops.get(&c) {
            return &ins[n..];
        }
        let n = Cond::arity(ins.len());
        &ins[1 + k * n..1 + (k + 1) * n]
    }

    /// The nodes from outside cond `c`'s branches that they read: they
    /// are evaluated before its switch.
    fn frontier(&self, c: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (k, range) in self.branches[&c].iter().enumerate() {
            let range = range.clone();
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
                        stack.extend(n.reads().copied());
                    }
                }
            }
        }
        out
    }

    /// The nodes a step of `id` reads: a cond's predicate, its control
    /// inputs and what its branches read from outside them; another
    /// node's inputs and control inputs.
    fn deps(&self, id: u32) -> Vec<u32> {
        let n = &self.nodes[id as usize];
        if !self.follows(n) {
            return Vec::new();
        }
        if self.branches.contains_key(&id) {
            // A cond's predicate, a loop's first values.
            let firsts = self.loops.get(&id).copied().unwrap_or(1);
            let mut d: Vec<u32> = n.inputs[..firsts]
                .iter()
                .filter(|o| !self.given(o))
                .map(|o| o.node)
                .collect();
            d.extend(
                n.control.iter().filter(|o| !self.given(o)).map(|o| o.node),
            );
            d.extend(self.frontier(id));
            return d;
        }
        n.reads()
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
        if let Some(&vars) = self.loops.get(&id) {
            return self.place_loop(id, vars);
        }
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

    /// Appends a while loop's items: enter, condition, test, body, next
    /// (back to the condition), exit.
    fn place_loop(&mut self, w: u32, vars: usize) -> Result<()> {
        let at = |items: &Vec<Item>| items.len() as u32;
        let enter = at(&self.items);
        self.items.push(Item::Enter { w });
        // The loop variables are the first nodes of the loop's range,
        // given by the enter step.
        let lo = self.branches[&w][0].start;
        for v in lo..lo + vars as u32 {
            self.mark.insert(v, true);
        }
        let top = at(&self.items);
        let outs = self.branch_outputs(w, 0);
        let (pred, next) = (self.roots(&outs[..1]), self.roots(&outs[1..]));
        self.emit(Some((w, 0)), pred)?;
        let test = at(&self.items);
        self.items.push(Item::Test { w, exit_at: 0 });
        self.emit(Some((w, 0)), next)?;
        self.items.push(Item::Next { w, enter, to: top });
        let exit = at(&self.items);
        self.items.push(Item::Exit { w, enter });
        self.items[test as usize] = Item::Test { w, exit_at: exit };
        Ok(())
    }

    fn branch_roots(&self, c: u32, k: usize) -> Vec<u32> {
        self.roots(self.branch_outputs(c, k))
    }

    /// The nodes of `outs` that are not given.
    fn roots(&self, outs: &[Output]) -> Vec<u32> {
        outs.iter()
            .filter(|o| !self.given(o))
            .map(|o| o.node)
            .collect()
    }
}

/// What a step of the evaluator does for a cond or loop ([`Item`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ctl {
    /// An ordinary step: run its node.
    None,
    /// Evaluate the predicate (input 0), keep the choice in the slot and,
    /// when false, go on at this step.
    Switch(u32),
    /// Go on at this step.
    Jump(u32),
    /// Give the chosen branch's outputs (inputs: the true branch's, then
    /// the false branch's) as the switch at this step chose.
    Merge(u32),
    /// Start a while loop: its variables' first values (the inputs) in
    /// the slot.
    Enter,
    /// The loop's body is done: the next values (the inputs) replace the
    /// variables in the slot of the step at `.0`; go on at `.1`.
    Next(u32, u32),
    /// The loop's outputs: the variables' values, moved from the slot of
    /// the step at this position.
    Exit(u32),
}

/// Runs a cond's control step; the step to go on at, if not the next.
pub(crate) fn control_step<'a>(
    ctl: Ctl,
    ins: &dyn Fn(usize) -> &'a Value,
    len: usize,
    out: &mut Vec<Value>,
) -> Result<Option<u32>> {
    match ctl {
        Ctl::Switch(else_at) => {
            let t = truth(ins(0))?;
            out.push(Tensor::scalar(t).into());
            Ok((!t).then_some(else_at))
        }
        Ctl::Jump(to) => Ok(Some(to)),
        Ctl::Enter => {
            out.extend((0..len).map(|k| ins(k).clone()));
            Ok(None)
        }
        Ctl::None | Ctl::Merge(_) | Ctl::Next(..) | Ctl::Exit(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::math::BinaryOp;
    use crate::op::Binary;
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

    #[test]
    fn a_loop_is_laid_out_as_enter_condition_test_body_next_exit() -> Result<()>
    {
        use crate::kernels::reduce::CmpOp;
        use crate::op::Compare;
        let g = Graph::new();
        let n = g.placeholder(DType::I64, None, Some("n"))?;
        let zero = g.scalar(0.0, DType::I64)?;
        let one = g.scalar(1.0, DType::I64)?;
        let out = g.while_loop(
            &[zero],
            |g, v| g.op1(Compare { op: CmpOp::Less }, &[v[0], n]),
            |g, v| {
                Ok(vec![g.op1(Binary { op: BinaryOp::Add }, &[v[0], one])?])
            },
        )?;
        let w = out[0].node;
        let nodes = g.inner.read().nodes.clone();
        let items = order(&nodes, &out, &[n])?;
        let (less, add) = (nodes[w as usize].inputs[1].node, w - 1);
        assert_eq!(
            items,
            vec![
                Item::Enter { w },
                Item::Node(less),
                Item::Test { w, exit_at: 5 },
                Item::Node(add),
                Item::Next { w, enter: 0, to: 1 },
                Item::Exit { w, enter: 0 },
            ]
        );
        Ok(())
    }
}
