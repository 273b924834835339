//! Producers and batching: the stages a caller composes into a pipeline.

pub mod feed;
pub mod producer;

pub use producer::{
    input_producer, match_filenames_once, match_filenames_once_in,
    range_input_producer, slice_input_producer, string_input_producer,
    InputProducerBuilder, RangeInputProducerBuilder,
    SliceInputProducerBuilder, SliceProducer, StringInputProducerBuilder,
};
