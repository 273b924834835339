//! Control inputs ([`Graph::set_control_inputs`], what
//! `tf.control_dependencies` sets): a node made while they are set runs
//! them first in every run that evaluates it, without reading them;
//! nodes made before or after do not. As TensorFlow 2.21's
//! `tf.compat.v1` (graph mode) orders them.

use feedstock::queue::PartialShape;
use feedstock::{DType, Result, Tensor};
use feedstock_tf1::{Graph, QueueKind, Session, StaticShape};

fn scalar() -> StaticShape {
    Some(PartialShape::new(Vec::new()))
}

#[test]
fn a_node_made_under_control_inputs_runs_them_first() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 10, &[(DType::I64, scalar())], None)?;
    let vals = g.constant(Tensor::vector(vec![1i64, 2, 3, 4]))?;
    let put = g.enqueue(q, &[vals], true)?;
    let before = g.queue_size(q)?;
    let take = g.dequeue(q)?[0];
    g.set_control_inputs(vec![take])?;
    let guarded = g.queue_size(q)?;
    g.set_control_inputs(Vec::new())?;
    let after = g.queue_size(q)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    let size = |o| -> Result<i32> {
        sess.run(&[o], &[])?[0].dense()?.scalar_value::<i32>()
    };
    // The size is read after the dequeue its control input makes.
    assert_eq!(size(guarded)?, 3);
    assert_eq!((size(before)?, size(after)?), (3, 3));
    assert_eq!(size(guarded)?, 2);
    Ok(())
}

#[test]
fn a_control_input_of_another_graph_is_refused() -> Result<()> {
    let g = Graph::new();
    let other = Graph::new();
    other.placeholder(DType::I64, scalar(), Some("a"))?;
    let x = other.placeholder(DType::I64, scalar(), Some("b"))?;
    let err = g.set_control_inputs(vec![x]).unwrap_err();
    assert!(err.to_string().contains("not of this graph"), "{err}");
    Ok(())
}
