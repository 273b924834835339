//! Preprocessing ops on image tensors.
