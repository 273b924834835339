//! `tf.cond` ([`Graph::cond`]): only the chosen branch's nodes run; what
//! the branches read from outside runs whichever is chosen. Behaviour
//! checked against TensorFlow 2.21's `tf.compat.v1` (graph mode).

use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor, Value};
use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::kernels::reduce::CmpOp;
use feedstock_tf1::op::{Binary, Compare, RandomUniform};
use feedstock_tf1::{Graph, Output, QueueKind, Session, StaticShape};

fn scalar() -> StaticShape {
    Some(PartialShape::new(Vec::new()))
}

fn pred(on: bool) -> Value {
    Tensor::scalar(on).into()
}

fn i64_of(v: &Value) -> Result<i64> {
    v.dense()?.scalar_value::<i64>()
}

#[test]
fn an_untaken_branch_does_not_dequeue() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 10, &[(DType::I64, scalar())], None)?;
    let vals = g.constant(Tensor::vector(vec![1i64, 2, 3, 4]))?;
    let put = g.enqueue(q, &[vals], true)?;
    let p = g.placeholder(DType::Bool, scalar(), Some("p"))?;
    let out = g.cond(
        p,
        |g| {
            let x = g.dequeue(q)?[0];
            let ten = g.scalar(10.0, DType::I64)?;
            Ok(vec![g.op1(Binary { op: BinaryOp::Mul }, &[x, ten])?])
        },
        |g| Ok(vec![g.scalar(-1.0, DType::I64)?]),
    )?;
    let size = g.queue_size(q)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    // TensorFlow 2.21: -1 leaving 4, then 10 leaving 3.
    let size_after = |on: bool| -> Result<(i64, i32)> {
        let got = sess.run(&out, &[(p, pred(on))])?;
        let left = sess.run(&[size], &[])?;
        Ok((i64_of(&got[0])?, left[0].dense()?.scalar_value::<i32>()?))
    };
    assert_eq!(size_after(false)?, (-1, 4));
    assert_eq!(size_after(false)?, (-1, 4));
    assert_eq!(size_after(true)?, (10, 3));
    Ok(())
}

#[test]
fn what_a_branch_reads_from_outside_runs_whichever_is_chosen() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 10, &[(DType::I64, scalar())], None)?;
    let p = g.placeholder(DType::Bool, scalar(), Some("p"))?;
    let vals = g.constant(Tensor::vector(vec![1i64, 2, 3, 4]))?;
    let put = g.enqueue(q, &[vals], true)?;
    let x = g.dequeue(q)?[0];
    let out = g.cond(
        p,
        |g| Ok(vec![g.op1(Binary { op: BinaryOp::Add }, &[x, x])?]),
        |_| Ok(vec![x]),
    )?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    let a = sess.run(&out, &[(p, pred(false))])?;
    let b = sess.run(&out, &[(p, pred(true))])?;
    assert_eq!((i64_of(&a[0])?, i64_of(&b[0])?), (1, 4));
    Ok(())
}

#[test]
fn a_random_op_in_an_untaken_branch_draws_nothing() -> Result<()> {
    let build = || -> Result<(Graph, Output, Output)> {
        let g = Graph::new();
        let p = g.placeholder(DType::Bool, scalar(), Some("p"))?;
        let out = g.cond(
            p,
            |g| {
                let r = RandomUniform {
                    dims: vec![],
                    dtype: DType::F32,
                    min: 0.0,
                    max: 1.0,
                    seed: Some(7),
                };
                Ok(vec![g.op1(r, &[])?])
            },
            |g| Ok(vec![g.scalar(-1.0, DType::F32)?]),
        )?;
        Ok((g, p, out[0]))
    };
    let draws = |skips: usize| -> Result<Vec<f32>> {
        let (g, p, out) = build()?;
        let sess = Session::new(&g);
        for _ in 0..skips {
            let v = sess.run(&[out], &[(p, pred(false))])?;
            assert_eq!(v[0].dense()?.scalar_value::<f32>()?, -1.0);
        }
        (0..2)
            .map(|_| {
                sess.run(&[out], &[(p, pred(true))])?[0]
                    .dense()?
                    .scalar_value::<f32>()
            })
            .collect()
    };
    assert_eq!(draws(3)?, draws(0)?);
    Ok(())
}

#[test]
fn nested_conds_choose_among_three() -> Result<()> {
    let g = Graph::new();
    let a = g.placeholder(DType::Bool, scalar(), Some("a"))?;
    let b = g.placeholder(DType::Bool, scalar(), Some("b"))?;
    let out = g.cond(
        a,
        |g| Ok(vec![g.scalar(1.0, DType::I64)?]),
        |g| {
            let two = g.scalar(2.0, DType::I64)?;
            g.cond(
                b,
                |g| {
                    Ok(vec![g.op1(Binary { op: BinaryOp::Mul }, &[two, two])?])
                },
                |g| Ok(vec![g.scalar(3.0, DType::I64)?]),
            )
        },
    )?;
    let sess = Session::new(&g);
    for (x, y, want) in [
        (true, true, 1),
        (true, false, 1),
        (false, true, 4),
        (false, false, 3),
    ] {
        let got = sess.run(&out, &[(a, pred(x)), (b, pred(y))])?;
        assert_eq!(i64_of(&got[0])?, want, "a={x} b={y}");
    }
    Ok(())
}

#[test]
fn a_node_made_in_a_branch_cannot_be_fetched_or_read_outside_it() -> Result<()>
{
    let g = Graph::new();
    let p = g.placeholder(DType::Bool, scalar(), Some("p"))?;
    let x = g.placeholder(DType::I64, scalar(), Some("x"))?;
    let mut inner = None;
    g.cond(
        p,
        |g| {
            let y = g.op1(Binary { op: BinaryOp::Add }, &[x, x])?;
            inner = Some(y);
            Ok(vec![y])
        },
        |_| Ok(vec![x]),
    )?;
    let inner = inner.unwrap();
    let outside = g.op1(Binary { op: BinaryOp::Mul }, &[inner, x])?;
    let sess = Session::new(&g);
    let feeds = [(p, pred(true)), (x, Tensor::scalar(2i64).into())];
    for fetch in [inner, outside] {
        let e = sess.run(&[fetch], &feeds).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        assert!(
            e.to_string()
                .contains("inside a branch of the tf.cond cond"),
            "{e}"
        );
    }
    Ok(())
}

#[test]
fn branches_must_agree_on_dtypes_and_count_and_shapes_merge() -> Result<()> {
    let g = Graph::new();
    let p = g.placeholder(DType::Bool, scalar(), Some("p"))?;
    let e = g
        .cond(
            p,
            |g| Ok(vec![g.scalar(1.0, DType::I64)?]),
            |g| Ok(vec![g.scalar(1.0, DType::F32)?]),
        )
        .unwrap_err();
    assert!(e.is_invalid_dtype(), "{e}");
    let e = g
        .cond(p, |g| Ok(vec![g.scalar(1.0, DType::I64)?]), |_| Ok(vec![]))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    // TensorFlow 2.21: (None, 3) and (2, None) merge to (None, None).
    let a = g.placeholder(
        DType::F32,
        Some(PartialShape::new(vec![None, Some(3)])),
        None,
    )?;
    let b = g.placeholder(
        DType::F32,
        Some(PartialShape::new(vec![Some(2), None])),
        None,
    )?;
    let c = g.placeholder(
        DType::F32,
        Some(PartialShape::new(vec![Some(2), Some(3)])),
        None,
    )?;
    let ab = g.cond(p, |_| Ok(vec![a, c]), |_| Ok(vec![b, c]))?;
    assert_eq!(g.shape(ab[0]), Some(PartialShape::new(vec![None, None])));
    assert_eq!(g.shape(ab[1]), g.shape(c));
    Ok(())
}

/// `i, acc = 0, 0; while i < n: i, acc = i + 1, acc + f(i)`.
fn sum_loop(
    g: &Graph,
    n: Output,
    f: impl FnOnce(&Graph, Output) -> Result<Output>,
) -> Result<Vec<Output>> {
    let zero = g.scalar(0.0, DType::I64)?;
    g.while_loop(
        &[zero, zero],
        |g, v| g.op1(Compare { op: CmpOp::Less }, &[v[0], n]),
        |g, v| {
            let one = g.scalar(1.0, DType::I64)?;
            let term = f(g, v[0])?;
            Ok(vec![
                g.op1(Binary { op: BinaryOp::Add }, &[v[0], one])?,
                g.op1(Binary { op: BinaryOp::Add }, &[v[1], term])?,
            ])
        },
    )
}

#[test]
fn a_while_loop_runs_its_body_while_the_condition_holds() -> Result<()> {
    let g = Graph::new();
    let n = g.placeholder(DType::I64, scalar(), Some("n"))?;
    let out =
        sum_loop(&g, n, |g, i| g.op1(Binary { op: BinaryOp::Mul }, &[i, i]))?;
    let sess = Session::new(&g);
    for (count, want) in [(0i64, 0i64), (1, 0), (4, 14)] {
        let got = sess.run(&out, &[(n, Tensor::scalar(count).into())])?;
        assert_eq!((i64_of(&got[0])?, i64_of(&got[1])?), (count, want));
    }
    Ok(())
}

#[test]
fn a_loop_body_dequeues_once_per_iteration_and_may_hold_a_cond() -> Result<()>
{
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 10, &[(DType::I64, scalar())], None)?;
    let vals = g.constant(Tensor::vector(vec![1i64, 2, 3, 4, 5, 6]))?;
    let put = g.enqueue(q, &[vals], true)?;
    let n = g.placeholder(DType::I64, scalar(), Some("n"))?;
    // Odd iterations dequeue, even ones add 100.
    let out = sum_loop(&g, n, |g, i| {
        let two = g.scalar(2.0, DType::I64)?;
        let zero = g.scalar(0.0, DType::I64)?;
        let r = g.op1(
            Binary {
                op: BinaryOp::FloorMod,
            },
            &[i, two],
        )?;
        let odd = g.op1(
            Compare {
                op: CmpOp::NotEqual,
            },
            &[r, zero],
        )?;
        Ok(g.cond(
            odd,
            |g| Ok(vec![g.dequeue(q)?[0]]),
            |g| Ok(vec![g.scalar(100.0, DType::I64)?]),
        )?[0])
    })?;
    let size = g.queue_size(q)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    // i = 0..4: 100 + 1 + 100 + 2.
    let got = sess.run(&out, &[(n, Tensor::scalar(4i64).into())])?;
    assert_eq!(i64_of(&got[1])?, 203);
    assert_eq!(
        sess.run(&[size], &[])?[0].dense()?.scalar_value::<i32>()?,
        4
    );
    Ok(())
}

#[test]
fn a_loop_body_must_keep_the_variables_shapes() -> Result<()> {
    let g = Graph::new();
    let x = g.constant(Tensor::vector(vec![1i64]))?;
    let t = g.scalar(1.0, DType::Bool)?;
    let e = g
        .while_loop(
            &[x],
            |_, _| Ok(t),
            |g, _| Ok(vec![g.constant(Tensor::vector(vec![1i64, 2]))?]),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("enters the loop with shape [1]"),
        "{e}"
    );
    Ok(())
}

#[test]
fn values_from_outside_a_loop_survive_every_iteration() -> Result<()> {
    // A branch in the body gives a value made outside the loop (read by
    // the merge alone): each iteration must see it whole.
    let g = Graph::new();
    let n = g.placeholder(DType::I64, scalar(), Some("n"))?;
    let x = g.placeholder(DType::I64, scalar(), Some("x"))?;
    let outer = g.op1(Binary { op: BinaryOp::Add }, &[x, x])?;
    let out = sum_loop(&g, n, |g, i| {
        let zero = g.scalar(0.0, DType::I64)?;
        let pos = g.op1(Compare { op: CmpOp::Greater }, &[i, zero])?;
        Ok(g.cond(
            pos,
            |_| Ok(vec![outer]),
            |g| Ok(vec![g.op1(Binary { op: BinaryOp::Mul }, &[i, i])?]),
        )?[0])
    })?;
    let sess = Session::new(&g);
    let feeds = [
        (n, Tensor::scalar(4i64).into()),
        (x, Tensor::scalar(5i64).into()),
    ];
    let got = sess.run(&out, &feeds)?;
    assert_eq!(i64_of(&got[1])?, 30);
    Ok(())
}
