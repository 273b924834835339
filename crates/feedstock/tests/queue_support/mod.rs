//! What the queue tests share: a spec of one int64 scalar component and
//! the values of a dequeued batch.

use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::{DType, Value};

/// One component: an int64 scalar.
pub(crate) fn scalar_i64() -> QueueSpec {
    QueueSpec::new().component(
        ComponentSpec::new(DType::I64).shape(PartialShape::scalar()),
    )
}

/// The int64 values of a batch's first component.
pub(crate) fn ints_of(batch: &[Value]) -> Vec<i64> {
    batch[0]
        .dense()
        .unwrap()
        .as_slice::<i64>()
        .unwrap()
        .to_vec()
}
