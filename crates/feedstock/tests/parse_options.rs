//! The parse options and outputs TensorFlow has: sequence lengths,
//! SparseFeature's `already_sorted` and unchecked indices, the specs
//! TensorFlow refuses, specs with very many features, and shapes whose
//! element count overflows.
//!
//! The expected values follow TensorFlow's
//! `kernel_tests/parsing_ops_test.py` and `parsing_ops.py` /
//! `parsing_config.py`, cited at each test.

use std::collections::BTreeMap;

use bytes::Bytes;
use feedstock::decode::example::{
    parse_example, parse_sequence_example, parse_single_example,
    parse_single_sequence_example, FeatureSpec, FixedSequence, Sparse,
};
use feedstock::decode::Records;
use feedstock::proto::{
    Example, Feature, FeatureList, FeatureLists, Features, SequenceExample,
};
use feedstock::{DType, Kind, Shape, SparseTensor, Tensor};
use prost::Message;

fn record(e: Example) -> Bytes {
    Bytes::from(e.encode_to_vec())
}

fn seq_record(
    context: Vec<(&str, Feature)>,
    lists: Vec<(&str, Vec<Feature>)>,
) -> Bytes {
    let context: BTreeMap<String, Feature> = context
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let lists: BTreeMap<String, FeatureList> = lists
        .into_iter()
        .map(|(k, steps)| (k.to_owned(), FeatureList { feature: steps }))
        .collect();
    let s = SequenceExample {
        context: Some(Features { feature: context }),
        feature_lists: Some(FeatureLists {
            feature_list: lists,
        }),
    };
    Bytes::from(s.encode_to_vec())
}

fn f32s(v: &[f32]) -> Feature {
    Feature::float_list(v.iter().copied())
}

// --- item 3: parse_sequence_example's third output -------------------------

#[test]
fn sequence_lengths_count_the_steps_of_each_fixed_sequence_list() {
    // TensorFlow's parse_sequence_example returns feature_list_lengths:
    // for each FixedLenSequenceFeature, int64 [batch] steps per example
    // (parsing_ops.py, ParseSequenceExampleV2's feature_list_dense_lengths).
    let lists = FeatureSpec::builder()
        .fixed_sequence(
            "frames",
            FixedSequence::new(DType::F32, [2]).allow_missing(true),
        )
        .var_len("tokens", DType::I64)
        .build()
        .unwrap();
    let context = FeatureSpec::builder().build().unwrap();
    let recs = [
        seq_record(
            vec![],
            vec![
                ("frames", vec![f32s(&[1., 2.]), f32s(&[3., 4.])]),
                ("tokens", vec![Feature::int64_list([7])]),
            ],
        ),
        seq_record(vec![], vec![]),
        seq_record(
            vec![],
            vec![(
                "frames",
                vec![f32s(&[5., 6.]), f32s(&[7., 8.]), f32s(&[9., 0.])],
            )],
        ),
    ];
    let out = parse_sequence_example(&recs, &context, &lists).unwrap();
    let frames = out.feature_lists["frames"].dense().unwrap();
    assert_eq!(frames.dims(), [3, 3, 2]);
    assert_eq!(
        out.lengths.keys().collect::<Vec<_>>(),
        ["frames"],
        "VarLen lists have no lengths, as in TensorFlow"
    );
    let lengths = &out.lengths["frames"];
    assert_eq!(lengths.dtype(), DType::I64);
    assert_eq!(lengths.dims(), [3]);
    assert_eq!(lengths.as_slice::<i64>().unwrap(), [2, 0, 3]);

    // One SequenceExample: the length is a scalar.
    for (i, rec) in recs.iter().enumerate() {
        let one =
            parse_single_sequence_example(rec, &context, &lists, "").unwrap();
        let n = one.lengths["frames"].scalar_value::<i64>().unwrap();
        assert_eq!(n, lengths.as_slice::<i64>().unwrap()[i]);
        let rows = one.feature_lists["frames"].dense().unwrap().dims()[0];
        assert_eq!(rows as i64, n);
    }
}

#[test]
fn sequence_parsers_refuse_two_empty_specs_but_not_an_empty_context() {
    // parsing_ops.py: "At least one of context_features and
    // sequence_features must be provided and non-empty."
    let empty = FeatureSpec::builder().build().unwrap();
    let rec = seq_record(vec![], vec![]);
    let e =
        parse_single_sequence_example(&rec, &empty, &empty, "k").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    let e = parse_sequence_example(std::slice::from_ref(&rec), &empty, &empty)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    let lists = FeatureSpec::builder()
        .var_len("t", DType::I64)
        .build()
        .unwrap();
    assert!(parse_single_sequence_example(&rec, &empty, &lists, "").is_ok());
}

// --- items 4 and 5: SparseFeature options ----------------------------------

/// TensorFlow's testSerializedContainingSparseFeatureReuse: `idx` holds
/// [5, 10]; sp1 has size 13, sp2 (already_sorted) size 7, so index 10 is
/// outside sp2. TensorFlow returns it unchecked.
fn reuse_records() -> Vec<Bytes> {
    vec![
        record(
            Example::builder()
                .floats("val1", [3., 4.])
                .floats("val2", [5., 6.])
                .int64("idx", [5, 10])
                .build(),
        ),
        record(
            Example::builder()
                .floats("val1", [])
                .int64("idx", [])
                .build(),
        ),
    ]
}

#[test]
fn sparse_index_outside_the_size_is_refused_by_default() {
    let spec = FeatureSpec::builder()
        .sparse("sp1", Sparse::new(["idx"], "val1", DType::F32, [13]))
        .sparse(
            "sp2",
            Sparse::new(["idx"], "val2", DType::F32, [7]).already_sorted(true),
        )
        .build()
        .unwrap();
    let recs = reuse_records();
    let keyed = Records::new(&recs).with_keys(&["r:0", "r:1"]).unwrap();
    let e = parse_example(keyed, &spec).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.key(), Some("r:0"));
    assert_eq!(e.field(), Some("sp2"));
    assert!(e.to_string().contains("index 10"), "{e}");
}

#[test]
fn sparse_feature_reuse_matches_tensorflow_with_unvalidated_indices() {
    let spec = FeatureSpec::builder()
        .sparse("sp1", Sparse::new(["idx"], "val1", DType::F32, [13]))
        .sparse(
            "sp2",
            Sparse::new(["idx"], "val2", DType::F32, [7])
                .already_sorted(true)
                .validate_indices(false),
        )
        .build()
        .unwrap();
    let out = parse_example(&reuse_records(), &spec).unwrap();
    let sp1 = out["sp1"].sparse().unwrap();
    assert_eq!(sp1.indices().as_slice::<i64>().unwrap(), [0, 5, 0, 10]);
    assert_eq!(sp1.values().as_slice::<f32>().unwrap(), [3., 4.]);
    assert_eq!(sp1.dims(), [2, 13]);
    let sp2 = out["sp2"].sparse().unwrap();
    assert_eq!(sp2.indices().as_slice::<i64>().unwrap(), [0, 5, 0, 10]);
    assert_eq!(sp2.values().as_slice::<f32>().unwrap(), [5., 6.]);
    assert_eq!(sp2.dims(), [2, 7]);
    // Such a tensor is kept as TensorFlow gives it, but cannot be made
    // dense: that needs every index inside the shape.
    let e = sp2.to_dense(&Tensor::scalar(0f32)).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("outside"), "{e}");
    // Unstacking keeps the out-of-range index in its row.
    let rows = sp2.unstack().unwrap();
    assert_eq!(rows[0].indices().as_slice::<i64>().unwrap(), [5, 10]);
    assert_eq!(rows[1].nnz(), 0);
}

#[test]
fn already_sorted_keeps_the_order_given_and_default_sorts() {
    // TensorFlow's SparseFeature: already_sorted=True skips the reorder.
    let rec = record(
        Example::builder()
            .floats("val", [1., 2., -1.])
            .int64("idx", [0, 9, 3])
            .build(),
    );
    let spec = |sorted: bool| {
        FeatureSpec::builder()
            .sparse(
                "sp",
                Sparse::new(["idx"], "val", DType::F32, [13])
                    .already_sorted(sorted),
            )
            .build()
            .unwrap()
    };
    let sorted = parse_single_example(&rec, &spec(false), "").unwrap();
    let sp = sorted["sp"].sparse().unwrap();
    assert_eq!(sp.indices().as_slice::<i64>().unwrap(), [0, 3, 9]);
    assert_eq!(sp.values().as_slice::<f32>().unwrap(), [1., -1., 2.]);
    let kept = parse_single_example(&rec, &spec(true), "").unwrap();
    let sp = kept["sp"].sparse().unwrap();
    assert_eq!(sp.indices().as_slice::<i64>().unwrap(), [0, 9, 3]);
    assert_eq!(sp.values().as_slice::<f32>().unwrap(), [1., 2., -1.]);
}

#[test]
fn sparse_features_of_two_dimensions_and_negative_indices_order_as_tensorflow()
{
    // TensorFlow 2.21 on these records: already_sorted keeps the wire
    // order; otherwise entries sort by index row, signed, and an
    // unchecked negative index sorts first.
    let rec = record(
        Example::builder()
            .int64("i0", [2, 0, 2, 1])
            .int64("i1", [1, 3, 0, 1])
            .floats("v", [1., 2., 3., 4.])
            .build(),
    );
    let spec = |sorted: bool| {
        FeatureSpec::builder()
            .sparse(
                "sp",
                Sparse::new(["i0", "i1"], "v", DType::F32, [3, 4])
                    .already_sorted(sorted),
            )
            .build()
            .unwrap()
    };
    let kept = parse_single_example(&rec, &spec(true), "").unwrap();
    let sp = kept["sp"].sparse().unwrap();
    assert_eq!(
        sp.indices().as_slice::<i64>().unwrap(),
        [2, 1, 0, 3, 2, 0, 1, 1]
    );
    assert_eq!(sp.values().as_slice::<f32>().unwrap(), [1., 2., 3., 4.]);
    assert_eq!(sp.dims(), [3, 4]);
    let sorted = parse_single_example(&rec, &spec(false), "").unwrap();
    let sp = sorted["sp"].sparse().unwrap();
    assert_eq!(
        sp.indices().as_slice::<i64>().unwrap(),
        [0, 3, 1, 1, 2, 0, 2, 1]
    );
    assert_eq!(sp.values().as_slice::<f32>().unwrap(), [2., 4., 3., 1.]);

    let neg = record(
        Example::builder()
            .floats("val", [1., 2., -1.])
            .int64("idx", [0, -9, 3])
            .build(),
    );
    let unchecked = |sorted: bool| {
        FeatureSpec::builder()
            .sparse(
                "sp",
                Sparse::new(["idx"], "val", DType::F32, [13])
                    .already_sorted(sorted)
                    .validate_indices(false),
            )
            .build()
            .unwrap()
    };
    let out = parse_single_example(&neg, &unchecked(false), "").unwrap();
    let sp = out["sp"].sparse().unwrap();
    assert_eq!(sp.indices().as_slice::<i64>().unwrap(), [-9, 0, 3]);
    assert_eq!(sp.values().as_slice::<f32>().unwrap(), [2., 1., -1.]);
    let out = parse_single_example(&neg, &unchecked(true), "").unwrap();
    let sp = out["sp"].sparse().unwrap();
    assert_eq!(sp.indices().as_slice::<i64>().unwrap(), [0, -9, 3]);
    // Checked (the default), the negative index is refused.
    let checked = FeatureSpec::builder()
        .sparse("sp", Sparse::new(["idx"], "val", DType::F32, [13]))
        .build()
        .unwrap();
    let e = parse_single_example(&neg, &checked, "f:3").unwrap_err();
    assert_eq!((e.kind(), e.key()), (Kind::InvalidArgument, Some("f:3")));
    assert!(e.to_string().contains("index -9"), "{e}");
}

// --- items 6 and 7: specs TensorFlow refuses -------------------------------

#[test]
fn empty_features_spec_is_refused_for_parse_example() {
    // parsing_config.py: ValueError("Missing: features was {}.") /
    // "features cannot be empty" for parse_example and
    // parse_single_example.
    let empty = FeatureSpec::builder().build().unwrap();
    let rec = record(Example::builder().int64("a", [1]).build());
    let e = parse_single_example(&rec, &empty, "k").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("cannot be empty"), "{e}");
    let e = parse_example(&[rec], &empty).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    // Even for an empty batch: the spec is checked before any record.
    assert!(parse_example(Records::new(&[]), &empty).is_err());
}

#[test]
fn fixed_sequence_without_allow_missing_is_refused_by_parse_example() {
    // parsing_ops.py _prepend_none_dimension: "Unsupported:
    // FixedLenSequenceFeature requires allow_missing to be True."
    let spec = FeatureSpec::builder()
        .fixed_sequence("q", FixedSequence::new(DType::I64, [2]))
        .build()
        .unwrap();
    let rec = record(Example::builder().int64("q", [1, 2]).build());
    for e in [
        parse_single_example(&rec, &spec, "k").unwrap_err(),
        parse_example(std::slice::from_ref(&rec), &spec).unwrap_err(),
    ] {
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert_eq!(e.field(), Some("q"));
        assert!(e.to_string().contains("allow_missing"), "{e}");
    }
    // In a SequenceExample's feature lists it is fine: a required list.
    let context = FeatureSpec::builder().build().unwrap();
    let seq =
        seq_record(vec![], vec![("q", vec![Feature::int64_list([1, 2])])]);
    let out =
        parse_single_sequence_example(&seq, &context, &spec, "").unwrap();
    assert_eq!(out.feature_lists["q"].dense().unwrap().dims(), [1, 2]);
    let missing = seq_record(vec![], vec![]);
    let e = parse_single_sequence_example(&missing, &context, &spec, "s:0")
        .unwrap_err();
    assert!(e.to_string().contains("required"), "{e}");
}

// --- issue 10 item 10: big specs -------------------------------------------

#[test]
fn small_and_mid_sized_specs_find_every_name() {
    // Small specs find names by comparing them in turn, larger ones by
    // hashing: both must give each feature's position.
    for n in [1, 2, 12, 13, 40] {
        let mut b = FeatureSpec::builder();
        for i in 0..n {
            b.fixed(format!("feature/{i}"), DType::F32, [1]);
        }
        let spec = b.build().unwrap();
        for i in 0..n {
            assert_eq!(spec.position(&format!("feature/{i}")), Some(i));
        }
        assert_eq!(spec.position("feature/"), None, "{n} features");
        assert_eq!(spec.position(&format!("feature/{n}")), None);
    }
}

#[test]
fn spec_with_200k_features_builds_and_finds_every_name() {
    // Building was quadratic (a linear name search per feature): 200k
    // features took minutes. With hash maps it is linear, fast even in a
    // debug build.
    const N: usize = 200_000;
    let mut b = FeatureSpec::builder();
    for i in 0..N {
        b.var_len(format!("f{i}"), DType::I64);
    }
    let spec = b.build().unwrap();
    assert_eq!(spec.len(), N);
    for i in (0..N).step_by(997) {
        assert_eq!(spec.position(&format!("f{i}")), Some(i));
    }
    assert_eq!(spec.position("f200000"), None);
    // A duplicate is still found, even as the last of 200k.
    b.var_len("f123456", DType::F32);
    let e = b.build().unwrap_err();
    assert_eq!(e.field(), Some("f123456"));
    // And parsing an Example against it finds its feature.
    let rec = record(Example::builder().int64("f199999", [4, 2]).build());
    let out = parse_single_example(&rec, &spec, "").unwrap();
    let v = out["f199999"].sparse().unwrap();
    assert_eq!(v.values().as_slice::<i64>().unwrap(), [4, 2]);
}

// --- issue 10 item 12: element counts that overflow ------------------------

const HUGE: usize = (1 << 62) + 1;

#[test]
fn shapes_whose_element_count_overflows_are_invalid_argument() {
    let shape = Shape::new([HUGE, 4]);
    assert_eq!(shape.num_elements(), usize::MAX, "saturates, never wraps");
    let e = shape.checked_num_elements().unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    // (2^62 + 1) * 4 wraps to 4: four values must not be accepted.
    let e = Tensor::new([HUGE, 4], vec![1i32, 2, 3, 4]).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("overflows"), "{e}");
    let e = Tensor::vector(vec![1u8, 2, 3, 4])
        .reshape([HUGE, 4])
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(Tensor::zeros(DType::F32, [HUGE, 4]).is_err());
    // A zero dimension makes a shape empty, but the other dimensions must
    // still multiply without overflow: a row of [0, HUGE, 4] would not.
    assert_eq!(Shape::new([0, HUGE]).checked_num_elements().unwrap(), 0);
    let empty = Tensor::zeros(DType::I64, [0, HUGE]).unwrap();
    assert_eq!(empty.num_elements(), 0);
    assert!(Shape::new([0, HUGE, 4]).checked_num_elements().is_err());
    assert!(Tensor::zeros(DType::I64, [0, HUGE, 4]).is_err());
}

#[test]
fn feature_specs_with_overflowing_shapes_are_refused_at_build() {
    let e = FeatureSpec::builder()
        .fixed("x", DType::F32, [HUGE, 4])
        .build()
        .unwrap_err();
    assert_eq!((e.kind(), e.field()), (Kind::InvalidArgument, Some("x")));
    let e = FeatureSpec::builder()
        .fixed_sequence(
            "q",
            FixedSequence::new(DType::I64, [4, HUGE]).allow_missing(true),
        )
        .build()
        .unwrap_err();
    assert_eq!(e.field(), Some("q"));
    let e = FeatureSpec::builder()
        .sparse("s", Sparse::new(["i", "j"], "v", DType::F32, [HUGE, 4]))
        .build()
        .unwrap_err();
    assert_eq!(e.field(), Some("s"));
}

#[test]
fn sparse_to_dense_of_an_overflowing_shape_is_an_error() {
    let sp = SparseTensor::new(
        Tensor::new([1, 2], vec![0i64, 0]).unwrap(),
        Tensor::vector(vec![1f32]),
        [HUGE, 4],
    )
    .unwrap();
    let e = sp.to_dense(&Tensor::scalar(0f32)).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}

// --- the feature kinds the sequence parsers take -----------------------------

#[test]
fn sequence_parsers_refuse_the_feature_kinds_tensorflow_refuses() {
    // parsing_config.py _ParseOpParams (ValueError "Unsupported ... for
    // key") and parsing_ops.py _parse_sequence_example_raw ("Value
    // feature_list.dense_defaults[a] must be None"): context features are
    // Fixed or VarLen; feature lists are FixedSequence (padded with zeros,
    // no default) or VarLen; Sparse is neither.
    let sparse = || Sparse::new(["i"], "v", DType::F32, [4]);
    let seq = || FixedSequence::new(DType::I64, [2]).allow_missing(true);
    let empty = FeatureSpec::builder().build().unwrap();
    let ok_lists = FeatureSpec::builder()
        .var_len("t", DType::I64)
        .build()
        .unwrap();
    let ok_context = FeatureSpec::builder()
        .var_len("c", DType::I64)
        .build()
        .unwrap();
    let one =
        |f: &dyn Fn(&mut feedstock::decode::example::FeatureSpecBuilder)| {
            let mut b = FeatureSpec::builder();
            f(&mut b);
            b.build().unwrap()
        };
    let bad_context = [
        one(&|b| {
            b.fixed_sequence("a", seq());
        }),
        one(&|b| {
            b.sparse("a", sparse());
        }),
    ];
    let bad_lists = [
        one(&|b| {
            b.fixed("a", DType::I64, [2]);
        }),
        one(&|b| {
            b.sparse("a", sparse());
        }),
        one(&|b| {
            b.fixed_sequence("a", seq().default_value(Tensor::scalar(3i64)));
        }),
    ];
    let rec = seq_record(vec![], vec![]);
    let check = |context: &FeatureSpec, lists: &FeatureSpec| {
        for e in [
            parse_single_sequence_example(&rec, context, lists, "s:0")
                .unwrap_err(),
            parse_sequence_example(std::slice::from_ref(&rec), context, lists)
                .unwrap_err(),
        ] {
            assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
            assert_eq!(e.field(), Some("a"), "{e}");
        }
    };
    for c in &bad_context {
        check(c, &ok_lists);
    }
    for l in &bad_lists {
        check(&ok_context, l);
    }
    // Each spec alone (with an empty other one) is refused the same way.
    check(&bad_context[0], &empty);
    check(&empty, &bad_lists[2]);
}

#[test]
fn an_empty_feature_list_has_length_zero_and_pads_with_zeros() {
    // TensorFlow 2.21: a list present with no steps and a missing list
    // (allow_missing) both have length 0; the batch pads to the longest
    // with zeros.
    let lists = FeatureSpec::builder()
        .fixed_sequence(
            "a",
            FixedSequence::new(DType::I64, [2]).allow_missing(true),
        )
        .build()
        .unwrap();
    let context = FeatureSpec::builder()
        .fixed_with_default("k", DType::I64, [], Tensor::scalar(5i64))
        .build()
        .unwrap();
    let recs = [
        seq_record(vec![], vec![("a", vec![])]),
        seq_record(vec![], vec![]),
        seq_record(vec![], vec![("a", vec![Feature::int64_list([1, 2])])]),
    ];
    let out = parse_sequence_example(&recs, &context, &lists).unwrap();
    assert_eq!(out.lengths["a"].as_slice::<i64>().unwrap(), [0, 0, 1]);
    let a = out.feature_lists["a"].dense().unwrap();
    assert_eq!(a.dims(), [3, 1, 2]);
    assert_eq!(a.as_slice::<i64>().unwrap(), [0, 0, 0, 0, 1, 2]);
    let k = out.context["k"].dense().unwrap();
    assert_eq!(k.as_slice::<i64>().unwrap(), [5, 5, 5]);
}
