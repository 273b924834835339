//! The `parse_example` family: serialized `tf.train.Example` and
//! `SequenceExample` records to tensors.
