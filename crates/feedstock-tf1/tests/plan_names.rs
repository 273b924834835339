//! Node names as TensorFlow gives them (unique names counted per name,
//! compared case-insensitively; `name=`; look-ups by name), and
//! `placeholder_with_default` and string `Add`, as TensorFlow 2.21 does.

use bytes::Bytes;
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor};
use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{Binary, RandomCrop};
use feedstock_tf1::{Graph, Session};

fn scalar(g: &Graph) -> Result<feedstock_tf1::Output> {
    g.constant(Tensor::scalar(1.0f32))
}

#[test]
fn default_names_are_counted_as_tensorflow_counts_them() -> Result<()> {
    let g = Graph::new();
    let names: Vec<String> = (0..3)
        .map(|_| scalar(&g).map(|o| g.name(o)))
        .collect::<Result<_>>()?;
    assert_eq!(names, ["Const", "Const_1", "Const_2"]);
    // A name asked for that is taken gets `_<count>`, skipping taken ones.
    g.set_next_name(Some("Const_3".into()), false);
    assert_eq!(g.name(scalar(&g)?), "Const_3");
    assert_eq!(g.name(scalar(&g)?), "Const_4");
    g.set_next_name(Some("Const_3".into()), false);
    assert_eq!(g.name(scalar(&g)?), "Const_3_1");
    // Case-insensitively: `CONST` is taken by `Const`.
    g.set_next_name(Some("CONST".into()), false);
    assert_eq!(g.name(scalar(&g)?), "CONST_5");
    Ok(())
}

#[test]
fn a_reserved_scope_name_is_taken_exactly() -> Result<()> {
    let g = Graph::new();
    let scope = g.unique_name("add");
    assert_eq!(scope, "add");
    assert_eq!(g.unique_name("add"), "add_1");
    g.set_next_name(Some(format!("{scope}/y")), false);
    let y = scalar(&g)?;
    let x = scalar(&g)?;
    g.set_next_name(Some(scope.clone()), true);
    let sum = g.op1(Binary { op: BinaryOp::Add }, &[x, y])?;
    assert_eq!(g.name(y), "add/y");
    assert_eq!(g.name(sum), "add");
    // The next node takes its default again.
    assert_eq!(g.name(scalar(&g)?), "Const_1");
    assert_eq!(g.output_by_name("add", 0), Some(sum));
    assert_eq!(g.output_by_name("add", 1), None);
    assert_eq!(g.output_by_name("nope", 0), None);
    let names: Vec<String> =
        g.node_names().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["add/y", "Const", "add", "Const_1"]);
    Ok(())
}

#[test]
fn placeholder_with_default_gives_its_input_unless_fed() -> Result<()> {
    let g = Graph::new();
    let input = g.constant(Tensor::new([1, 2], vec![1i32, 2])?)?;
    let p = g.placeholder_with_default(
        input,
        Some(PartialShape::new(vec![None, Some(2)])),
    )?;
    assert_eq!(g.name(p), "PlaceholderWithDefault");
    assert_eq!(g.shape(p).unwrap().dims(), &[None, Some(2)]);
    let sess = Session::new(&g);
    let got = sess.run(&[p], &[])?;
    assert_eq!(got[0].dense()?.as_slice::<i32>()?, &[1, 2]);
    let fed = Tensor::new([2, 2], vec![5i32, 6, 7, 8])?;
    let got = sess.run(&[p], &[(p, fed.into())])?;
    assert_eq!(got[0].dense()?.dims(), &[2, 2]);
    let err = g
        .placeholder_with_default(
            input,
            Some(PartialShape::new(vec![Some(3)])),
        )
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert!(err.to_string().contains("incompatible"), "{err}");
    Ok(())
}

#[test]
fn strings_add_by_concatenating_with_broadcasting() -> Result<()> {
    let g = Graph::new();
    let col = g.constant(Tensor::new(
        [2, 1],
        vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")],
    )?)?;
    let row = g.constant(Tensor::vector(vec![
        Bytes::from_static(b"x"),
        Bytes::from_static(b"y"),
    ]))?;
    let sum = g.op1(Binary { op: BinaryOp::Add }, &[col, row])?;
    assert_eq!(g.shape(sum).unwrap().dims(), &[Some(2), Some(2)]);
    let got = Session::new(&g).run(&[sum], &[])?;
    let t = got[0].dense()?;
    assert_eq!(t.dtype(), DType::String);
    let want: Vec<Bytes> = ["ax", "ay", "bx", "by"]
        .iter()
        .map(|s| Bytes::from(s.as_bytes().to_vec()))
        .collect();
    assert_eq!(t.as_slice::<Bytes>()?, &want[..]);
    // Only `Add` takes strings.
    let err = g
        .op1(Binary { op: BinaryOp::Sub }, &[col, row])
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    Ok(())
}

#[test]
fn assign_sets_a_variable_and_is_no_initializer() -> Result<()> {
    let g = Graph::new();
    let var = g.variable(g.constant(Tensor::vector(vec![1i32, 2]))?, None)?;
    let set =
        g.assign(var.value, g.constant(Tensor::vector(vec![5i32, 6]))?)?;
    assert_eq!(g.initializers(), vec![var.initializer]);
    let sess = Session::new(&g);
    sess.run(&[var.initializer], &[])?;
    let got = sess.run(&[set, var.value], &[])?;
    assert_eq!(got[0].dense()?.as_slice::<i32>()?, &[5, 6]);
    let got = sess.run(&[var.value], &[])?;
    assert_eq!(got[0].dense()?.as_slice::<i32>()?, &[5, 6]);
    let wrong = g.constant(Tensor::vector(vec![1.0f32, 2.0]))?;
    assert_eq!(
        g.assign(var.value, wrong).unwrap_err().kind(),
        Kind::InvalidArgument
    );
    let long = g.constant(Tensor::vector(vec![1i32, 2, 3]))?;
    assert_eq!(
        g.assign(var.value, long).unwrap_err().kind(),
        Kind::InvalidArgument
    );
    assert!(g.assign(long, long).is_err());
    Ok(())
}

#[test]
fn random_crop_takes_a_size_computed_when_run() -> Result<()> {
    let g = Graph::new();
    let image = g.constant(Tensor::new(
        [4, 5, 3],
        (0..60).map(|x| x as f32).collect(),
    )?)?;
    let size = g.placeholder(
        DType::I32,
        Some(PartialShape::new(vec![Some(3)])),
        None,
    )?;
    let crop = g.op1(
        RandomCrop {
            size: None,
            seed: Some(7),
        },
        &[image, size],
    )?;
    assert_eq!(g.shape(crop).unwrap().dims(), &[None, None, None]);
    let sess = Session::new(&g);
    let got =
        sess.run(&[crop], &[(size, Tensor::vector(vec![2i32, 3, 3]).into())])?;
    assert_eq!(got[0].dense()?.dims(), &[2, 3, 3]);
    for bad in [vec![5i32, 5, 3], vec![-1, 2, 3]] {
        let err = sess
            .run(&[crop], &[(size, Tensor::vector(bad).into())])
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
    }
    let two = g.placeholder(
        DType::I32,
        Some(PartialShape::new(vec![Some(2)])),
        None,
    )?;
    assert!(g
        .op1(
            RandomCrop {
                size: None,
                seed: None
            },
            &[image, two]
        )
        .is_err());
    let floats = g.placeholder(DType::F32, None, None)?;
    assert!(g
        .op1(
            RandomCrop {
                size: None,
                seed: None
            },
            &[image, floats]
        )
        .is_err());
    Ok(())
}

#[test]
fn names_go_under_the_name_scope() -> Result<()> {
    let g = Graph::new();
    let scope = g.unique_name("input");
    g.set_name_scope(&scope);
    assert_eq!(g.name_scope(), "input");
    let c = scalar(&g)?;
    let var = g.variable(c, None)?;
    let q = g.queue(
        feedstock_tf1::QueueKind::Fifo,
        4,
        &[(DType::F32, None)],
        Some("fifo"),
    )?;
    g.set_name_scope("");
    assert_eq!(g.queue_name(q), "input/fifo");
    assert_eq!(g.name(c), "input/Const");
    assert_eq!(g.name(var.value), "input/Variable");
    assert_eq!(g.name(var.initializer), "input/Variable/Assign");
    assert_eq!(g.name(scalar(&g)?), "Const");
    assert_eq!(g.unique_name("input"), "input_1");
    Ok(())
}
