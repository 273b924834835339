//! TensorBoard summaries: event files of scalar values.
