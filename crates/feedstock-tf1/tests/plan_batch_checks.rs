//! What a batching stage checks when built, and the static shapes of its
//! outputs, as TensorFlow 2.21's `tf.train.batch` family gives them.

use bytes::Bytes;
use feedstock::decode::example::{FeatureSpec, Sparse};
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor};
use feedstock_tf1::op::{Parse, Reshape};
use feedstock_tf1::{BatchOptions, Graph, Output, StaticShape};

fn opts(batch_size: usize) -> BatchOptions {
    BatchOptions {
        batch_size,
        ..Default::default()
    }
}

fn shape(dims: &[Option<usize>]) -> StaticShape {
    Some(PartialShape::new(dims.to_vec()))
}

fn refused(r: Result<Vec<Output>>, says: &str) {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    assert!(e.to_string().contains(says), "{e} does not say {says:?}");
}

fn row(g: &Graph, n: usize) -> Result<Output> {
    g.constant(Tensor::vector(vec![1.0f32; n]))
}

// The messages are TensorFlow 2.21's (`tf.train.batch_join`, `batch` with
// `shapes`), seen under it.
#[test]
fn join_lists_must_agree_in_shape() -> Result<()> {
    let g = Graph::new();
    let (three, two, scalar) = (
        row(&g, 3)?,
        row(&g, 2)?,
        g.constant(Tensor::scalar(1.0f32))?,
    );
    refused(
        g.batch(&[vec![three], vec![two]], None, opts(1)),
        "Shapes (3,) and (2,) are not compatible",
    );
    refused(
        g.batch(&[vec![three], vec![scalar]], None, opts(1)),
        "Shapes (3,) and () are not compatible",
    );
    // A partly known shape merges with a known one.
    let some = g.placeholder(DType::F32, shape(&[None]), None)?;
    let out = g.batch(&[vec![some], vec![three]], None, opts(2))?;
    assert_eq!(g.shape(out[0]), shape(&[Some(2), Some(3)]));
    // With enqueue_many only the example shapes must agree, not the
    // number of examples in each list's chunk.
    let (m12, m22) = (
        g.constant(Tensor::new([1, 2], vec![0.0f32; 2])?)?,
        g.constant(Tensor::new([2, 2], vec![0.0f32; 4])?)?,
    );
    let many = BatchOptions {
        enqueue_many: true,
        ..opts(1)
    };
    let out = g.batch(&[vec![m12], vec![m22]], None, many.clone())?;
    assert_eq!(g.shape(out[0]), shape(&[Some(1), Some(2)]));
    let m13 = g.constant(Tensor::new([1, 3], vec![0.0f32; 3])?)?;
    refused(g.batch(&[vec![m12], vec![m13]], None, many), "compatible");
    Ok(())
}

#[test]
fn given_shapes_are_counted_and_checked() -> Result<()> {
    let g = Graph::new();
    let three = row(&g, 3)?;
    let with = |shapes: Vec<Vec<Option<usize>>>, many: bool| BatchOptions {
        shapes: Some(shapes.into_iter().map(PartialShape::new).collect()),
        enqueue_many: many,
        dynamic_pad: true,
        ..opts(1)
    };
    refused(
        g.batch(
            &[vec![three, three]],
            None,
            with(vec![vec![Some(3)]], false),
        ),
        "1 shapes given for 2 components",
    );
    refused(
        g.batch(&[vec![three]], None, with(vec![vec![Some(4)]], false)),
        "Shapes (3,) and (4,) are incompatible",
    );
    refused(
        g.batch(
            &[vec![three]],
            None,
            with(vec![vec![Some(3), Some(1)]], false),
        ),
        "Shapes (3,) and (3, 1) are incompatible",
    );
    refused(
        g.batch(&[vec![three]], None, with(vec![vec![Some(3)]], true)),
        "Shapes () and (3,) are incompatible",
    );
    // The given shape is the output's, after the batch dim.
    let out = g.batch(&[vec![three]], None, with(vec![vec![None]], false))?;
    assert_eq!(g.shape(out[0]), shape(&[Some(1), None]));
    let out = g.batch(&[vec![three]], None, with(vec![vec![]], true))?;
    assert_eq!(g.shape(out[0]), shape(&[Some(1)]));
    // A given shape refines an unknown one.
    let unknown = g.placeholder(DType::F32, None, None)?;
    let out =
        g.batch(&[vec![unknown]], None, with(vec![vec![Some(3)]], false))?;
    assert_eq!(g.shape(out[0]), shape(&[Some(1), Some(3)]));
    Ok(())
}

#[test]
fn enqueue_many_components_agree_on_the_number_of_examples() -> Result<()> {
    let g = Graph::new();
    let (three, two) = (row(&g, 3)?, row(&g, 2)?);
    let many = BatchOptions {
        enqueue_many: true,
        ..opts(2)
    };
    refused(
        g.batch(&[vec![three, two]], None, many.clone()),
        "component 1 has 2 examples",
    );
    let scalar = g.constant(Tensor::scalar(1.0f32))?;
    refused(
        g.batch(&[vec![scalar]], None, many.clone()),
        "rank at least 1",
    );
    let keep2 = g.constant(Tensor::vector(vec![true, false]))?;
    refused(g.batch(&[vec![three]], Some(keep2), many), "keep_input");
    Ok(())
}

#[test]
fn keep_input_rank_is_checked_when_built() -> Result<()> {
    let g = Graph::new();
    let three = row(&g, 3)?;
    let vector = g.constant(Tensor::vector(vec![true, false, true]))?;
    let matrix = g.constant(Tensor::new([1, 3], vec![true, false, true])?)?;
    let unknown = g.placeholder(DType::Bool, None, None)?;
    let many = BatchOptions {
        enqueue_many: true,
        ..opts(2)
    };
    refused(
        g.batch(&[vec![three]], Some(vector), opts(2)),
        "cannot be a vector",
    );
    refused(
        g.batch(&[vec![three]], Some(matrix), many.clone()),
        "0 or 1 dimensions",
    );
    refused(
        g.batch(&[vec![three]], Some(unknown), opts(2)),
        "rank must be known",
    );
    let out = g.batch(&[vec![three]], Some(vector), many.clone())?;
    assert_eq!(g.shape(out[0]), shape(&[Some(2)]));
    // A scalar keep_input with enqueue_many keeps or drops a whole chunk.
    let yes = g.constant(Tensor::scalar(true))?;
    assert!(g.batch(&[vec![three]], Some(yes), many).is_ok());
    Ok(())
}

#[test]
fn sparse_outputs_have_unknown_dims() -> Result<()> {
    let g = Graph::new();
    let spec = {
        let mut b = FeatureSpec::builder();
        b.var_len("v", DType::I64)
            .sparse("s", Sparse::new(["i"], "x", DType::F32, [5]))
            .fixed("d", DType::I64, [2]);
        b.build()?
    };
    let two = g.constant(Tensor::vector(vec![Bytes::new(); 2]))?;
    let parsed = g.op(
        Parse {
            spec: spec.clone(),
            batched: true,
        },
        &[two],
    )?;
    let dims: Vec<StaticShape> = parsed.iter().map(|&o| g.shape(o)).collect();
    assert_eq!(
        dims,
        vec![
            shape(&[None, None]),
            shape(&[None, Some(5)]),
            shape(&[Some(2), Some(2)]),
        ]
    );
    let one = g.constant(Tensor::vector(vec![Bytes::new()]))?;
    let single = g.op(
        Parse {
            spec,
            batched: false,
        },
        &[g.op1(
            Reshape {
                shape: Some(vec![]),
            },
            &[one],
        )?],
    )?;
    assert_eq!(g.shape(single[1]), shape(&[Some(5)]));
    let batched = g.batch(&[single], None, opts(2))?;
    let dims: Vec<StaticShape> = batched.iter().map(|&o| g.shape(o)).collect();
    assert_eq!(
        dims,
        vec![
            shape(&[None, None]),
            shape(&[None, None]),
            shape(&[Some(2), Some(2)]),
        ]
    );
    Ok(())
}
