//! Fuzzes the Example and SequenceExample parsers: no input may panic,
//! every failure is InvalidArgument, a batch agrees with its single
//! parses, and whatever prost decodes, re-encoded, is never reported as
//! malformed. (Re-encoded, because prost does not check the wire type of
//! a map field and so accepts some invalid bytes that the fast parser
//! rejects.)

#![no_main]

use bytes::Bytes;
use feedstock::decode::example::{
    parse_example, parse_single_example, parse_single_sequence_example,
    FeatureSpec, FixedSequence, Sparse,
};
use feedstock::proto::{Example, SequenceExample};
use feedstock::{DType, Kind, Tensor};
use libfuzzer_sys::fuzz_target;
use prost::Message;

fn example_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed("a", DType::I64, [])
        .fixed_with_default(
            "b",
            DType::F32,
            [2],
            Tensor::vector(vec![0f32; 2]),
        )
        .var_len("c", DType::String)
        .var_len("d", DType::I64)
        .sparse("s", Sparse::new(["a"], "b", DType::F32, [4]))
        .fixed_sequence(
            "q",
            FixedSequence::new(DType::I64, [2]).allow_missing(true),
        )
        .build()
        .unwrap()
}

fn context_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed_with_default("a", DType::I64, [], Tensor::scalar(0i64))
        .var_len("c", DType::String)
        .build()
        .unwrap()
}

fn sequence_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed_sequence(
            "x",
            FixedSequence::new(DType::F32, []).allow_missing(true),
        )
        .var_len("t", DType::I64)
        .build()
        .unwrap()
}

fn malformed(e: &feedstock::Error) -> bool {
    e.message().contains("could not parse")
}

fuzz_target!(|data: &[u8]| {
    let record = Bytes::copy_from_slice(data);
    let spec = example_spec();
    let single = parse_single_example(&record, &spec, "fuzz:0");
    if let Err(e) = &single {
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    }
    if let Ok(m) = Example::decode(data) {
        let canonical = Bytes::from(m.encode_to_vec());
        if let Err(e) = parse_single_example(&canonical, &spec, "") {
            assert!(!malformed(&e), "prost's encoding rejected: {e}");
        }
    }
    let batch = parse_example(&[record.clone(), record.clone()], &spec);
    assert_eq!(single.is_ok(), batch.is_ok());

    let (context, sequence) = (context_spec(), sequence_spec());
    let seq =
        parse_single_sequence_example(&record, &context, &sequence, "fuzz:0");
    if let Err(e) = &seq {
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    }
    if let Ok(m) = SequenceExample::decode(data) {
        let canonical = Bytes::from(m.encode_to_vec());
        let r =
            parse_single_sequence_example(&canonical, &context, &sequence, "");
        if let Err(e) = r {
            assert!(!malformed(&e), "prost's encoding rejected: {e}");
        }
    }
});
