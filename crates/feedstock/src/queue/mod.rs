//! Bounded blocking queues with TensorFlow's semantics.
