//! Seed guide, "Feeding": the caller's own code provides the data of
//! each step, as `feed_dict` does with `tf.placeholder` inputs.
//!
//! The inputs a step reads are declared once (name, dtype, and a shape
//! whose batch dimension is left open); each step, the caller builds a
//! batch (the seed's `my_python_preprocessing_fn`) and feeds it; the step
//! reads its inputs from the feed. A declared input that the step reads
//! without it being fed is a clear FailedPrecondition error naming the
//! input, never a hang or a default; a value of the wrong dtype or shape
//! is refused when it is fed.
//!
//! Run with `cargo run --example feeding`.

use std::error::Error;

use feedstock::input::feed::{Feed, Inputs};
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Tensor};

const EXAMPLES: usize = 50;
const BATCH_SIZE: usize = 8;

/// The data, held by the caller: point `i` and its label, 1 when it lies
/// above the line `y = -x`.
fn point(i: usize) -> ([f32; 2], i64) {
    let x = (i as f32 * 0.37).sin() * 3.0;
    let y = (i as f32 * 0.91).cos() * 3.0;
    ([x, y], i64::from(x + y > 0.0))
}

/// The seed's `my_python_preprocessing_fn`: the batch of examples
/// `start..end`, as tensors ready to feed.
fn make_batch(
    start: usize,
    end: usize,
) -> feedstock::Result<(Tensor, Tensor)> {
    let (points, labels): (Vec<[f32; 2]>, Vec<i64>) =
        (start..end).map(point).unzip();
    let points = Tensor::new([end - start, 2], points.concat())?;
    Ok((points, Tensor::vector(labels)))
}

/// One step of the "classifier": the number of points of the batch that
/// the linear rule `x + y > 0` labels correctly. It reads its two inputs
/// from the feed.
fn correct_in_batch(feed: &Feed<'_>) -> feedstock::Result<usize> {
    let points = feed.get("points")?.as_slice::<f32>()?;
    let labels = feed.get("labels")?.as_slice::<i64>()?;
    Ok(points
        .chunks(2)
        .zip(labels)
        .filter(|(p, &l)| i64::from(p[0] + p[1] > 0.0) == l)
        .count())
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    // The placeholders: the batch dimension is left open.
    let mut inputs = Inputs::new();
    inputs
        .declare("points", DType::F32, PartialShape::new([None, Some(2)]))?
        .declare("labels", DType::I64, PartialShape::new([None]))?;

    // Each step: build a batch, feed it, run the step.
    let (mut fed, mut correct) = (0, 0);
    for start in (0..EXAMPLES).step_by(BATCH_SIZE) {
        let end = EXAMPLES.min(start + BATCH_SIZE);
        let (points, labels) = make_batch(start, end)?;
        let feed =
            inputs.feed().set("points", points)?.set("labels", labels)?;
        correct += correct_in_batch(&feed)?;
        fed += end - start;
    }
    // Every example fed once; the last batch was smaller (50 = 6 × 8 + 2).
    assert_eq!(fed, EXAMPLES);
    assert_eq!(correct, EXAMPLES, "the rule that made the labels");

    // A step whose labels were not fed: an error naming the input.
    let (points, _) = make_batch(0, BATCH_SIZE)?;
    let feed = inputs.feed().set("points", points)?;
    let err = correct_in_batch(&feed).unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition);
    assert_eq!(err.field(), Some("labels"));
    println!("unfed input: {err}");

    // Values that do not match the declaration are refused when fed.
    let wrong_dtype = Tensor::vector(vec![1i32, 0]);
    let err = inputs.feed().set("labels", wrong_dtype).unwrap_err();
    assert_eq!(
        (err.kind(), err.field()),
        (Kind::InvalidArgument, Some("labels"))
    );
    let wrong_shape = Tensor::new([2, 3], vec![0f32; 6])?;
    let err = inputs.feed().set("points", wrong_shape).unwrap_err();
    assert_eq!(
        (err.kind(), err.field()),
        (Kind::InvalidArgument, Some("points"))
    );
    println!("wrong shape: {err}");

    println!(
        "fed {fed} examples in batches of {BATCH_SIZE}: {correct} correct"
    );
    Ok(())
}
