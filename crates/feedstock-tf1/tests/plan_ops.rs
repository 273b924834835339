//! Ops through the graph builder and the session: `tf.reshape` to a
//! shape computed when run (the static shape TensorFlow infers from what
//! is known of the shape's value, the value moved, not copied, when
//! nothing else reads it, and TensorFlow 2.21's kernel errors); every
//! op's input count checked when it is added; a callable
//! (`Session::make_callable`) run many times.

use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor, Value};
use feedstock_tf1::op::{Identity, Reshape, Stack};
use feedstock_tf1::{Graph, Session};

#[test]
fn a_stacked_shape_is_resolved_when_run() -> Result<()> {
    let g = Graph::new();
    let x = g.constant(Tensor::new([24], (0..24u8).collect())?)?;
    // An identity whose value only the reshape reads: the reshape moves it.
    let x = g.op1(Identity {}, &[x])?;
    let scalar = Some(PartialShape::new(Vec::<Option<usize>>::new()));
    let h = g.placeholder(DType::I64, scalar.clone(), Some("h"))?;
    let w = g.placeholder(DType::I64, scalar, Some("w"))?;
    let three = g.constant(Tensor::scalar(3i64))?;
    let shape = g.op1(Stack { axis: 0 }, &[h, w, three])?;
    let image = g.op1(Reshape { shape: None }, &[x, shape])?;
    assert_eq!(g.shape(image).unwrap().dims(), &[None, None, Some(3)]);
    // One unknown dimension of a fully known input is inferred.
    let four = g.constant(Tensor::scalar(4i64))?;
    let shape = g.op1(Stack { axis: 0 }, &[h, four, three])?;
    let known = g.op1(Reshape { shape: None }, &[x, shape])?;
    assert_eq!(g.shape(known).unwrap().dims(), &[Some(2), Some(4), Some(3)]);

    let sess = Session::new(&g);
    let feed = |hh: i64, ww: i64| {
        vec![
            (h, Value::from(Tensor::scalar(hh))),
            (w, Value::from(Tensor::scalar(ww))),
        ]
    };
    let got = sess.run(&[image], &feed(2, 4))?;
    let t = got[0].dense()?;
    assert_eq!(t.dims(), &[2, 4, 3]);
    assert_eq!(t.as_slice::<u8>()?[21..], [21, 22, 23]);
    let e = sess.run(&[image], &feed(2, 3)).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(
        e.to_string().contains(
            "Input to reshape is a tensor with 24 values, but the requested \
             shape has 18"
        ),
        "{e}"
    );
    Ok(())
}

#[test]
fn a_shape_of_the_wrong_kind_is_refused_while_building() -> Result<()> {
    let g = Graph::new();
    let x = g.constant(Tensor::vector(vec![1.0f32; 6]))?;
    let f = g.constant(Tensor::vector(vec![2.0f32, 3.0]))?;
    let e = g.op1(Reshape { shape: None }, &[x, f]).unwrap_err();
    assert!(
        e.to_string().contains("not in list of allowed values"),
        "{e}"
    );
    let m = g.constant(Tensor::new([1, 2], vec![2i32, 3])?)?;
    let e = g.op1(Reshape { shape: None }, &[x, m]).unwrap_err();
    assert!(e.to_string().contains("Shape must be rank 1"), "{e}");
    let e = g.op1(Reshape { shape: None }, &[x]).unwrap_err();
    assert!(
        e.to_string().contains("Reshape: takes 2 inputs, got 1"),
        "{e}"
    );
    // A constant shape input is read while building.
    let c = g.constant(Tensor::vector(vec![-1i32, 2]))?;
    let r = g.op1(Reshape { shape: None }, &[x, c])?;
    assert_eq!(g.shape(r).unwrap().dims(), &[Some(3), Some(2)]);
    let c = g.constant(Tensor::vector(vec![-2i32, 2]))?;
    let e = g.op1(Reshape { shape: None }, &[x, c]).unwrap_err();
    assert!(e
        .to_string()
        .contains("Invalid value in tensor used for shape: -2"));
    Ok(())
}

#[test]
fn a_wrong_number_of_inputs_is_refused_not_a_panic() -> Result<()> {
    use feedstock_tf1::op::{
        Concat, Fill, Gather, Shape, Slice, SliceInputs, StridedSlice,
        StridedSliceInputs, Tile, Transpose,
    };
    let g = Graph::new();
    let x = g.constant(Tensor::vector(vec![1i32, 2]))?;
    let refused = |r: Result<feedstock_tf1::Output>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    };
    refused(g.op1(
        Reshape {
            shape: Some(vec![2]),
        },
        &[],
    ));
    refused(g.op1(Transpose { perm: vec![0] }, &[]));
    refused(g.op1(Identity {}, &[]));
    refused(g.op1(Shape {}, &[]));
    refused(g.op1(Fill {}, &[x]));
    refused(g.op1(Tile { multiples: vec![1] }, &[]));
    refused(g.op1(Gather { axis: 0 }, &[x]));
    refused(g.op1(Stack { axis: 0 }, &[]));
    refused(g.op1(Concat { axis: 0 }, &[]));
    let slice = Slice {
        begin: vec![0],
        size: vec![1],
    };
    refused(g.op1(slice, &[]));
    refused(g.op1(SliceInputs {}, &[x, x]));
    refused(g.op1(StridedSlice::ranges(&[0], &[1], &[1]), &[]));
    refused(g.op1(StridedSliceInputs {}, &[x]));
    Ok(())
}

#[test]
fn every_op_checks_its_input_count_when_added() -> Result<()> {
    use feedstock_tf1::kernels::math::BinaryOp;
    use feedstock_tf1::op::{
        Binary, BooleanMask, Cast, DrawBoundingBoxes, OneHot, Select,
        SequenceMask,
    };
    let g = Graph::new();
    let x = g.constant(Tensor::vector(vec![1i32, 2]))?;
    let refused = |r: Result<feedstock_tf1::Output>, says: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    };
    let add = Binary { op: BinaryOp::Add };
    refused(g.op1(add.clone(), &[x]), "Binary: takes 2 inputs, got 1");
    refused(g.op1(add, &[x, x, x]), "Binary: takes 2 inputs, got 3");
    let hot = OneHot { depth: 3, axis: -1 };
    refused(g.op1(hot, &[x]), "OneHot: takes 3 inputs, got 1");
    refused(
        g.op1(Cast { dtype: DType::F32 }, &[]),
        "Cast: takes 1 input, got 0",
    );
    refused(g.op1(Select {}, &[x, x]), "Select: takes 3 inputs, got 2");
    let mask = SequenceMask { dtype: DType::Bool };
    refused(
        g.op1(mask, &[x, x, x]),
        "SequenceMask: takes 1 to 2 inputs, got 3",
    );
    refused(
        g.op1(DrawBoundingBoxes {}, &[x]),
        "DrawBoundingBoxes: takes 2 to 3 inputs, got 1",
    );
    refused(
        g.op1(BooleanMask { axis: 0 }, &[x]),
        "BooleanMask: takes 2 inputs, got 1",
    );
    refused(
        g.op1(Stack { axis: 0 }, &[]),
        "takes at least 1 input, got 0",
    );
    Ok(())
}

#[test]
fn a_callable_runs_its_compiled_fetches_and_checks_each_feed() -> Result<()> {
    use feedstock_tf1::kernels::math::BinaryOp;
    use feedstock_tf1::op::Binary;
    let g = Graph::new();
    let x = g.placeholder(
        DType::I64,
        Some(PartialShape::new([Some(2)])),
        Some("x"),
    )?;
    let y = g.op1(Binary { op: BinaryOp::Add }, &[x, x])?;
    let sess = Session::new(&g);
    let f = sess.make_callable(&[y], &[x])?;
    for k in 0..3i64 {
        let out = f.call(vec![Value::Dense(Tensor::vector(vec![k, 10]))])?;
        assert_eq!(out[0].dense()?.as_slice::<i64>()?, &[2 * k, 20]);
    }
    let e = f
        .call(vec![Value::Dense(Tensor::vector(vec![1.0f32, 2.0]))])
        .unwrap_err();
    assert!(e.to_string().contains("fed a float32 value for x:0"), "{e}");
    let e = f
        .call(vec![Value::Dense(Tensor::vector(vec![1i64, 2, 3]))])
        .unwrap_err();
    assert!(e.to_string().contains("for x:0, which has shape"), "{e}");
    assert_eq!(f.call(vec![]).unwrap_err().kind(), Kind::InvalidArgument);
    sess.close();
    let e = f
        .call(vec![Value::Dense(Tensor::vector(vec![1i64, 2]))])
        .unwrap_err();
    assert_eq!(e.kind(), Kind::Cancelled);
    Ok(())
}
