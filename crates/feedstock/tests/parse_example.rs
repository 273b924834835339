//! The parse_example family: TensorFlow's golden outputs, a table of cases
//! covering every option and every error, and a property test holding the
//! fast wire-format parser to prost's decoding plus a plain reference
//! conversion.

use base64::Engine;
use bytes::Bytes;
use feedstock::decode::example::{
    parse_example, parse_sequence_example, parse_single_example,
    parse_single_sequence_example, FeatureKind, FeatureSpec, FixedSequence,
    Parsed, Sparse,
};
use feedstock::decode::Records;
use feedstock::proto::{self, feature::Kind as FKind};
use feedstock::{DType, Kind, Shape, SparseTensor, Tensor, Value};
use proptest::prelude::*;
use prost::Message;
use serde_json::Value as Json;

// ---------------------------------------------------------------------------
// A small protobuf writer, to build Examples the way any producer might
// (packed or not, repeated fields, unknown fields), not only prost's way.

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(tag: u32, wire: u8, out: &mut Vec<u8>) {
    varint(u64::from(tag) << 3 | u64::from(wire), out);
}

/// A length-delimited field.
fn ld(tag: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    key(tag, 2, &mut out);
    varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

fn packed_i64(vals: &[i64]) -> Vec<u8> {
    let mut p = Vec::new();
    for &v in vals {
        varint(v as u64, &mut p);
    }
    ld(1, &p)
}

fn unpacked_i64(vals: &[i64]) -> Vec<u8> {
    let mut p = Vec::new();
    for &v in vals {
        key(1, 0, &mut p);
        varint(v as u64, &mut p);
    }
    p
}

fn packed_f32(vals: &[f32]) -> Vec<u8> {
    let p: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    ld(1, &p)
}

fn unpacked_f32(vals: &[f32]) -> Vec<u8> {
    let mut p = Vec::new();
    for v in vals {
        key(1, 5, &mut p);
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

fn bytes_items(vals: &[&[u8]]) -> Vec<u8> {
    vals.iter().flat_map(|v| ld(1, v)).collect()
}

/// A Feature holding an Int64List.
fn f_i64(vals: &[i64]) -> Vec<u8> {
    ld(3, &packed_i64(vals))
}

fn f_f32(vals: &[f32]) -> Vec<u8> {
    ld(2, &packed_f32(vals))
}

fn f_bytes(vals: &[&[u8]]) -> Vec<u8> {
    ld(1, &bytes_items(vals))
}

/// An Example with these (name, serialized Feature) entries, in order.
fn example(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut features = Vec::new();
    for (name, feature) in entries {
        let mut entry = ld(1, name.as_bytes());
        entry.extend(ld(2, feature));
        features.extend(ld(1, &entry));
    }
    ld(1, &features)
}

fn seq_example(
    context: &[(&str, Vec<u8>)],
    lists: &[(&str, Vec<Vec<u8>>)],
) -> Vec<u8> {
    let mut out = example(context);
    let mut fl = Vec::new();
    for (name, steps) in lists {
        let list: Vec<u8> = steps.iter().flat_map(|s| ld(1, s)).collect();
        let mut entry = ld(1, name.as_bytes());
        entry.extend(ld(2, &list));
        fl.extend(ld(1, &entry));
    }
    out.extend(ld(2, &fl));
    out
}

// ---------------------------------------------------------------------------
// Golden files written and read back by TensorFlow 2.21.

fn golden(name: &str) -> Json {
    let path =
        format!("{}/tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn records(j: &Json) -> Vec<Bytes> {
    j["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let b64 = r["b64"].as_str().unwrap();
            Bytes::from(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
            )
        })
        .collect()
}

fn dtype_of(name: &str) -> DType {
    DType::from_name(name).unwrap()
}

fn shape_of(j: &Json) -> Vec<usize> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn tensor_of(j: &Json) -> Tensor {
    let dtype = dtype_of(j["dtype"].as_str().unwrap());
    let shape = shape_of(&j["shape"]);
    let vals = j["values"].as_array().unwrap();
    match dtype {
        DType::I64 => Tensor::new(
            shape,
            vals.iter().map(|v| v.as_i64().unwrap()).collect(),
        ),
        DType::F32 => {
            let bits = j["bits"].as_array().unwrap();
            Tensor::new(
                shape,
                bits.iter()
                    .map(|b| {
                        let h = b.as_str().unwrap();
                        f32::from_bits(u32::from_str_radix(h, 16).unwrap())
                    })
                    .collect(),
            )
        }
        DType::String => Tensor::new(
            shape,
            vals.iter()
                .map(|v| Bytes::from(v.as_str().unwrap().to_owned()))
                .collect(),
        ),
        other => panic!("unexpected golden dtype {other}"),
    }
    .unwrap()
}

fn value_of(j: &Json) -> Value {
    if j.get("sparse").and_then(Json::as_bool) == Some(true) {
        let dense: Vec<usize> = tensor_of(&j["dense_shape"])
            .into_vec::<i64>()
            .unwrap()
            .into_iter()
            .map(|d| d as usize)
            .collect();
        Value::Sparse(
            SparseTensor::new(
                tensor_of(&j["indices"]),
                tensor_of(&j["values"]),
                dense,
            )
            .unwrap(),
        )
    } else {
        Value::Dense(tensor_of(j))
    }
}

fn spec_of(j: &Json) -> FeatureSpec {
    let mut b = FeatureSpec::builder();
    for (name, f) in j.as_object().unwrap() {
        let dtype = dtype_of(f["dtype"].as_str().unwrap());
        match f["kind"].as_str().unwrap() {
            "FixedLenFeature" => {
                let shape = shape_of(&f["shape"]);
                match &f["default_value"] {
                    Json::Null => b.fixed(name, dtype, shape),
                    d => {
                        b.fixed_with_default(name, dtype, shape, tensor_of(d))
                    }
                };
            }
            "VarLenFeature" => {
                b.var_len(name, dtype);
            }
            "FixedLenSequenceFeature" => {
                let allow = f["allow_missing"].as_bool().unwrap();
                b.fixed_sequence(
                    name,
                    FixedSequence::new(dtype, shape_of(&f["shape"]))
                        .allow_missing(allow),
                );
            }
            k => panic!("unexpected golden feature kind {k}"),
        }
    }
    b.build().unwrap()
}

/// Asserts that `got` is exactly TensorFlow's output `want` (every
/// feature, dtype, shape, index and float bit pattern).
fn assert_matches_tf(got: &Parsed, want: &Json) {
    let want = want.as_object().unwrap();
    assert_eq!(got.len(), want.len());
    for (name, w) in want {
        let expected = value_of(w);
        let actual = got.get(name).unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(bits(actual), bits(&expected), "feature {name}");
    }
}

/// A value with floats replaced by their bit patterns, so that equality is
/// bit-exact (and NaN equals itself).
fn bits(v: &Value) -> Value {
    fn t(t: &Tensor) -> Tensor {
        match t.as_slice::<f32>() {
            Ok(f) => Tensor::new(
                t.dims().to_vec(),
                f.iter().map(|x| x.to_bits()).collect::<Vec<u32>>(),
            )
            .unwrap(),
            Err(_) => t.clone(),
        }
    }
    match v {
        Value::Dense(d) => Value::Dense(t(d)),
        Value::Sparse(s) => Value::Sparse(
            SparseTensor::new(
                s.indices().clone(),
                t(s.values()),
                s.dense_shape(),
            )
            .unwrap(),
        ),
    }
}

#[test]
fn golden_examples_parse_as_tensorflow_batch() {
    let j = golden("examples.tfrecord.json");
    let spec = spec_of(&j["parse_spec"]);
    let recs = records(&j);
    assert_eq!(recs.len(), 8);
    let keys: Vec<String> = (0..recs.len())
        .map(|i| format!("examples.tfrecord:{i}"))
        .collect();
    let got =
        parse_example(Records::new(&recs).with_keys(&keys).unwrap(), &spec)
            .unwrap();
    assert_matches_tf(&got, &j["parse_example_output"]);
}

#[test]
fn golden_example_parses_as_tensorflow_single() {
    let j = golden("examples.tfrecord.json");
    let spec = spec_of(&j["parse_spec"]);
    let recs = records(&j);
    let got =
        parse_single_example(&recs[0], &spec, "examples.tfrecord:0").unwrap();
    assert_matches_tf(&got, &j["parse_single_example_output_record0"]);
}

#[test]
fn golden_examples_agree_with_prost_decoding() {
    let j = golden("examples.tfrecord.json");
    let spec = spec_of(&j["parse_spec"]);
    for (i, rec) in records(&j).iter().enumerate() {
        let fast = parse_single_example(rec, &spec, "").unwrap();
        let slow = reference_single(rec, &spec).unwrap();
        assert_eq!(bits_all(fast.values()), bits_all(&slow), "record {i}");
    }
}

#[test]
fn golden_sequence_examples_parse_as_tensorflow() {
    let j = golden("sequence_examples.tfrecord.json");
    let context = spec_of(&j["context_spec"]);
    let sequence = spec_of(&j["sequence_spec"]);
    let outs = j["parse_single_sequence_example_outputs"]
        .as_array()
        .unwrap();
    let recs = records(&j);
    assert_eq!(recs.len(), outs.len());
    for (rec, out) in recs.iter().zip(outs) {
        let got =
            parse_single_sequence_example(rec, &context, &sequence, "seq")
                .unwrap();
        assert_matches_tf(&got.context, &out["context"]);
        assert_matches_tf(&got.feature_lists, &out["feature_list"]);
    }
}

#[test]
fn golden_sequence_examples_batch_pads_to_longest() {
    let j = golden("sequence_examples.tfrecord.json");
    let context = spec_of(&j["context_spec"]);
    let sequence = spec_of(&j["sequence_spec"]);
    let recs = records(&j);
    let got = parse_sequence_example(&recs, &context, &sequence).unwrap();
    let (c, s) = (&got.context, &got.feature_lists);
    assert_eq!(c["seq_id"].dense().unwrap().dims(), [3]);
    let scores = s["scores"].dense().unwrap();
    // Steps 2, 3 and 4, padded to 4 with zeros.
    assert_eq!(scores.dims(), [3, 4]);
    assert_eq!(&scores.as_slice::<f32>().unwrap()[2..4], [0.0, 0.0]);
    let tokens = s["tokens"].sparse().unwrap();
    assert_eq!(tokens.dims(), [3, 4, 3]);
    assert_eq!(tokens.nnz(), 3 + 6 + 9);
    // Each unbatched row equals the single parse.
    for (e, rec) in recs.iter().enumerate() {
        let single =
            parse_single_sequence_example(rec, &context, &sequence, "")
                .unwrap()
                .feature_lists;
        let row = &tokens.unstack().unwrap()[e];
        let one = single["tokens"].sparse().unwrap();
        assert_eq!(row.indices(), one.indices());
        assert_eq!(row.values(), one.values());
    }
}

// ---------------------------------------------------------------------------
// The reference: prost decodes the whole message, then a plain conversion.

#[derive(Debug)]
enum RefError {
    /// Bytes prost could not decode.
    Decode,
    /// A problem with this feature.
    Feature(String),
}

enum List {
    Unset,
    I64(Vec<i64>),
    F32(Vec<f32>),
    Bytes(Vec<Bytes>),
}

impl List {
    fn of(f: Option<&proto::Feature>) -> Option<List> {
        let f = f?;
        Some(match &f.kind {
            None => List::Unset,
            Some(FKind::Int64List(l)) => List::I64(l.value.clone()),
            Some(FKind::FloatList(l)) => List::F32(l.value.clone()),
            Some(FKind::BytesList(l)) => List::Bytes(l.value.clone()),
        })
    }

    /// The values as a rank-1 tensor of `dtype`, `None` for another dtype.
    fn tensor(self, dtype: DType) -> Option<Tensor> {
        Some(match (self, dtype) {
            (List::Unset, d) => Tensor::zeros(d, [0]).unwrap(),
            (List::I64(v), DType::I64) => Tensor::vector(v),
            (List::F32(v), DType::F32) => Tensor::vector(v),
            (List::Bytes(v), DType::String) => Tensor::vector(v),
            _ => return None,
        })
    }
}

fn features_of(bytes: &[u8]) -> Result<proto::Features, RefError> {
    let ex = proto::Example::decode(bytes).map_err(|_| RefError::Decode)?;
    Ok(ex.features.unwrap_or_default())
}

fn reference_single(
    bytes: &[u8],
    spec: &FeatureSpec,
) -> Result<Vec<Value>, RefError> {
    let features = features_of(bytes)?;
    spec.iter()
        .map(|(name, kind)| reference_feature(&features, name, kind))
        .collect()
}

fn reference_feature(
    features: &proto::Features,
    name: &str,
    kind: &FeatureKind,
) -> Result<Value, RefError> {
    let bad = || RefError::Feature(name.to_owned());
    let list = |k: &str| List::of(features.feature.get(k));
    let dtype = kind.dtype();
    Ok(match kind {
        FeatureKind::Fixed { shape, default, .. } => match list(name) {
            None | Some(List::Unset) => {
                Value::Dense(default.clone().ok_or_else(bad)?)
            }
            Some(l) => {
                let t = l.tensor(dtype).ok_or_else(bad)?;
                Value::Dense(t.reshape(shape.clone()).map_err(|_| bad())?)
            }
        },
        FeatureKind::VarLen { .. } => {
            let t = match list(name) {
                None => Tensor::zeros(dtype, [0]).unwrap(),
                Some(l) => l.tensor(dtype).ok_or_else(bad)?,
            };
            Value::Sparse(SparseTensor::from_dense_vector(t).unwrap())
        }
        FeatureKind::FixedSequence {
            shape,
            allow_missing,
            ..
        } => {
            let t = match list(name) {
                None if *allow_missing => Tensor::zeros(dtype, [0]).unwrap(),
                None => return Err(bad()),
                Some(l) => l.tensor(dtype).ok_or_else(bad)?,
            };
            let stride = shape.num_elements();
            if t.num_elements() % stride != 0 {
                return Err(bad());
            }
            let mut dims = vec![t.num_elements() / stride];
            dims.extend_from_slice(shape.dims());
            Value::Dense(t.reshape(dims).unwrap())
        }
        FeatureKind::Sparse {
            index_keys,
            value_key,
            size,
            ..
        } => {
            let values = match list(value_key) {
                None => Tensor::zeros(dtype, [0]).unwrap(),
                Some(l) => l.tensor(dtype).ok_or_else(bad)?,
            };
            let n = values.num_elements();
            let mut cols = Vec::new();
            for (k, ik) in index_keys.iter().enumerate() {
                let t = match list(ik) {
                    None => Tensor::zeros(DType::I64, [0]).unwrap(),
                    Some(l) => l.tensor(DType::I64).ok_or_else(bad)?,
                };
                let v = t.into_vec::<i64>().unwrap();
                if v.len() != n
                    || v.iter().any(|&i| i < 0 || i as usize >= size[k])
                {
                    return Err(bad());
                }
                cols.push(v);
            }
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&j| {
                cols.iter().map(|c| c[j]).collect::<Vec<_>>()
            });
            let idx: Vec<i64> = order
                .iter()
                .flat_map(|&j| cols.iter().map(move |c| c[j]))
                .collect();
            let picked: Vec<Tensor> = order
                .iter()
                .map(|&j| values.slice(j, j + 1).unwrap())
                .collect();
            let vals = if picked.is_empty() {
                Tensor::zeros(dtype, [0]).unwrap()
            } else {
                Tensor::concat(&picked).unwrap()
            };
            Value::Sparse(
                SparseTensor::new(
                    Tensor::new([n, index_keys.len()], idx).unwrap(),
                    vals,
                    size.clone(),
                )
                .unwrap(),
            )
        }
    })
}

/// The reference batch: each example by [`reference_single`], then
/// stacked (dense), stacked with a batch index (sparse) or padded to the
/// longest (fixed sequences).
fn reference_batch(
    records: &[Bytes],
    spec: &FeatureSpec,
) -> Result<Vec<Value>, RefError> {
    let singles = records
        .iter()
        .map(|r| reference_single(r, spec))
        .collect::<Result<Vec<_>, _>>()?;
    let b = records.len();
    Ok(spec
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            let col: Vec<&Value> = singles.iter().map(|s| &s[i]).collect();
            match kind {
                FeatureKind::Fixed { shape, .. } => {
                    let ts: Vec<Tensor> = col
                        .iter()
                        .map(|v| v.dense().unwrap().clone())
                        .collect();
                    Value::Dense(if b == 0 {
                        Tensor::zeros(kind.dtype(), shape.prepend(0)).unwrap()
                    } else {
                        Tensor::stack(&ts).unwrap()
                    })
                }
                FeatureKind::FixedSequence { shape, default, .. } => {
                    let max =
                        col.iter().map(|v| v.dense().unwrap().dims()[0]).max();
                    let max = max.unwrap_or(0);
                    let pad = default.clone().unwrap_or_else(|| {
                        Tensor::zeros(kind.dtype(), []).unwrap()
                    });
                    let mut rows = Vec::new();
                    for v in &col {
                        let t = v.dense().unwrap();
                        let mut parts = vec![t.clone()];
                        let missing = max - t.dims()[0];
                        if missing > 0 {
                            let n = missing * shape.num_elements();
                            let fill: Vec<Tensor> = (0..n)
                                .map(|_| pad.clone().reshape([1]).unwrap())
                                .collect();
                            let flat = Tensor::concat(&fill).unwrap();
                            let mut dims = vec![missing];
                            dims.extend_from_slice(shape.dims());
                            parts.push(flat.reshape(dims).unwrap());
                        }
                        rows.push(Tensor::concat(&parts).unwrap());
                    }
                    let mut dims = vec![b, max];
                    dims.extend_from_slice(shape.dims());
                    Value::Dense(if b == 0 {
                        Tensor::zeros(kind.dtype(), dims).unwrap()
                    } else {
                        Tensor::stack(&rows).unwrap()
                    })
                }
                FeatureKind::VarLen { .. } | FeatureKind::Sparse { .. }
                    if b == 0 =>
                {
                    let mut dense = vec![0usize];
                    match kind {
                        FeatureKind::Sparse { size, .. } => {
                            dense.extend(size.iter().copied())
                        }
                        _ => dense.push(0),
                    }
                    let rank = dense.len();
                    Value::Sparse(
                        SparseTensor::new(
                            Tensor::new([0, rank], Vec::<i64>::new()).unwrap(),
                            Tensor::zeros(kind.dtype(), [0]).unwrap(),
                            dense,
                        )
                        .unwrap(),
                    )
                }
                FeatureKind::VarLen { .. } | FeatureKind::Sparse { .. } => {
                    let parts: Vec<SparseTensor> = col
                        .iter()
                        .map(|v| v.sparse().unwrap().clone())
                        .collect();
                    let mut s = SparseTensor::stack(&parts).unwrap();
                    if let FeatureKind::Sparse { size, .. } = kind {
                        // A batch keeps the declared size, even where no
                        // example reaches it.
                        let mut dense = vec![b];
                        dense.extend(size.iter().copied());
                        s = SparseTensor::new(
                            s.indices().clone(),
                            s.values().clone(),
                            dense,
                        )
                        .unwrap();
                    }
                    Value::Sparse(s)
                }
            }
        })
        .collect())
}

fn bits_all(v: &[Value]) -> Vec<Value> {
    v.iter().map(bits).collect()
}

// ---------------------------------------------------------------------------
// The table.

enum Expect {
    /// These values, by name (features not listed are not checked).
    Ok(Vec<(&'static str, Value)>),
    /// An error of this kind about this feature (or none).
    Err(Kind, Option<&'static str>),
}

struct Case {
    name: &'static str,
    record: Vec<u8>,
    spec: FeatureSpec,
    expect: Expect,
}

fn dense<T: feedstock::tensor::Element>(shape: &[usize], v: Vec<T>) -> Value {
    Value::Dense(Tensor::new(shape.to_vec(), v).unwrap())
}

fn sparse<T: feedstock::tensor::Element>(
    rank: usize,
    idx: Vec<i64>,
    vals: Vec<T>,
    shape: Vec<usize>,
) -> Value {
    let n = vals.len();
    Value::Sparse(
        SparseTensor::new(
            Tensor::new([n, rank], idx).unwrap(),
            Tensor::vector(vals),
            shape,
        )
        .unwrap(),
    )
}

fn strs(v: &[&str]) -> Vec<Bytes> {
    v.iter().map(|s| Bytes::from(s.to_string())).collect()
}

fn spec(
    f: impl FnOnce(&mut feedstock::decode::example::FeatureSpecBuilder),
) -> FeatureSpec {
    let mut b = FeatureSpec::builder();
    f(&mut b);
    b.build().unwrap()
}

fn ok(
    name: &'static str,
    record: Vec<u8>,
    spec: FeatureSpec,
    values: Vec<(&'static str, Value)>,
) -> Case {
    Case {
        name,
        record,
        spec,
        expect: Expect::Ok(values),
    }
}

fn err(
    name: &'static str,
    record: Vec<u8>,
    spec: FeatureSpec,
    feature: Option<&'static str>,
) -> Case {
    Case {
        name,
        record,
        spec,
        expect: Expect::Err(Kind::InvalidArgument, feature),
    }
}

fn cases() -> Vec<Case> {
    let i64s = |n: &'static str| {
        spec(|b| {
            b.fixed(n, DType::I64, [2]);
        })
    };
    let label = || {
        spec(|b| {
            b.fixed("label", DType::I64, []);
        })
    };
    let mut with_unknown = example(&[("label", f_i64(&[3]))]);
    with_unknown.extend(ld(9, b"ignored"));
    let mut unknown_in_feature = vec![0x20, 0x05]; // field 4 varint 5
    unknown_in_feature.extend(f_i64(&[8]));
    let mut unknown_in_list = vec![0x10, 0x01]; // field 2 varint 1
    unknown_in_list.extend(packed_i64(&[4, 5]));
    let mut group_in_example = vec![0x2b, 0x08, 0x01, 0x2c];
    group_in_example.extend(example(&[("label", f_i64(&[6]))]));
    // One map entry whose value field is split in two: the halves merge.
    let split_value = {
        let mut entry = ld(1, b"v");
        entry.extend(ld(2, &ld(3, &packed_i64(&[1]))));
        entry.extend(ld(2, &ld(3, &packed_i64(&[2, 3]))));
        ld(1, &ld(1, &entry))
    };
    // Value before key inside the entry.
    let value_first = {
        let mut entry = ld(2, &f_i64(&[42]));
        entry.extend(ld(1, b"label"));
        ld(1, &ld(1, &entry))
    };
    // Two `features` fields merge into one map.
    let two_features = {
        let mut r = example(&[("a", f_i64(&[1]))]);
        r.extend(example(&[("b", f_i64(&[2]))]));
        r
    };
    let ab = || {
        spec(|b| {
            b.fixed("a", DType::I64, []).fixed("b", DType::I64, []);
        })
    };
    vec![
        // --- FixedLen, every dtype and shape
        ok(
            "fixed int64 scalar",
            example(&[("label", f_i64(&[7]))]),
            label(),
            vec![("label", dense(&[], vec![7i64]))],
        ),
        ok(
            "fixed int64 vector",
            example(&[("v", f_i64(&[1, -2]))]),
            i64s("v"),
            vec![("v", dense(&[2], vec![1i64, -2]))],
        ),
        ok(
            "fixed int64 extremes",
            example(&[("v", f_i64(&[i64::MIN, i64::MAX]))]),
            i64s("v"),
            vec![("v", dense(&[2], vec![i64::MIN, i64::MAX]))],
        ),
        ok(
            "fixed float matrix",
            example(&[("m", f_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))]),
            spec(|b| {
                b.fixed("m", DType::F32, [2, 3]);
            }),
            vec![("m", dense(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]))],
        ),
        ok(
            "fixed float keeps nan and -0 bits",
            example(&[("x", f_f32(&[f32::from_bits(0x7fc0_0001), -0.0]))]),
            spec(|b| {
                b.fixed("x", DType::F32, [2]);
            }),
            vec![("x", dense(&[2], vec![f32::from_bits(0x7fc0_0001), -0.0]))],
        ),
        ok(
            "fixed string",
            example(&[("s", f_bytes(&[b"hi", b""]))]),
            spec(|b| {
                b.fixed("s", DType::String, [2]);
            }),
            vec![("s", dense(&[2], strs(&["hi", ""])))],
        ),
        ok(
            "fixed empty shape [0] with no values",
            example(&[("z", f_i64(&[]))]),
            spec(|b| {
                b.fixed("z", DType::I64, [0]);
            }),
            vec![("z", dense(&[0], Vec::<i64>::new()))],
        ),
        ok(
            "fixed default used when missing",
            example(&[]),
            spec(|b| {
                b.fixed_with_default(
                    "w",
                    DType::F32,
                    [2],
                    Tensor::vector(vec![0.5f32, 1.5]),
                );
            }),
            vec![("w", dense(&[2], vec![0.5f32, 1.5]))],
        ),
        ok(
            "fixed default reshaped to the shape",
            example(&[]),
            spec(|b| {
                b.fixed_with_default(
                    "w",
                    DType::I64,
                    [2, 1],
                    Tensor::vector(vec![1i64, 2]),
                );
            }),
            vec![("w", dense(&[2, 1], vec![1i64, 2]))],
        ),
        ok(
            "fixed default used for a feature with no list",
            example(&[("w", Vec::new())]),
            spec(|b| {
                b.fixed_with_default(
                    "w",
                    DType::String,
                    [],
                    Tensor::string("und"),
                );
            }),
            vec![("w", dense(&[], strs(&["und"])))],
        ),
        ok(
            "fixed present value beats default",
            example(&[("w", f_i64(&[9]))]),
            spec(|b| {
                b.fixed_with_default(
                    "w",
                    DType::I64,
                    [],
                    Tensor::scalar(0i64),
                );
            }),
            vec![("w", dense(&[], vec![9i64]))],
        ),
        // --- wire variations
        ok(
            "unpacked int64 list",
            example(&[("v", ld(3, &unpacked_i64(&[5, 6])))]),
            i64s("v"),
            vec![("v", dense(&[2], vec![5i64, 6]))],
        ),
        ok(
            "mixed packed and unpacked int64",
            example(&[(
                "v",
                ld(3, &[packed_i64(&[5]), unpacked_i64(&[6])].concat()),
            )]),
            i64s("v"),
            vec![("v", dense(&[2], vec![5i64, 6]))],
        ),
        ok(
            "unpacked float list",
            example(&[("x", ld(2, &unpacked_f32(&[1.5, 2.5])))]),
            spec(|b| {
                b.fixed("x", DType::F32, [2]);
            }),
            vec![("x", dense(&[2], vec![1.5f32, 2.5]))],
        ),
        ok(
            "repeated list fields of one kind merge",
            example(&[("v", [f_i64(&[1]), f_i64(&[2])].concat())]),
            i64s("v"),
            vec![("v", dense(&[2], vec![1i64, 2]))],
        ),
        ok(
            "a later list of another kind replaces the earlier",
            example(&[("v", [f_f32(&[1.0]), f_i64(&[3, 4])].concat())]),
            i64s("v"),
            vec![("v", dense(&[2], vec![3i64, 4]))],
        ),
        ok(
            "duplicate feature name: last entry wins",
            example(&[("label", f_i64(&[1])), ("label", f_i64(&[2]))]),
            label(),
            vec![("label", dense(&[], vec![2i64]))],
        ),
        ok(
            "unknown field in Example skipped",
            with_unknown,
            label(),
            vec![("label", dense(&[], vec![3i64]))],
        ),
        ok(
            "unknown field in Feature skipped",
            example(&[("label", unknown_in_feature)]),
            label(),
            vec![("label", dense(&[], vec![8i64]))],
        ),
        ok(
            "unknown field in Int64List skipped",
            example(&[("v", ld(3, &unknown_in_list))]),
            i64s("v"),
            vec![("v", dense(&[2], vec![4i64, 5]))],
        ),
        ok(
            "unknown group skipped",
            group_in_example,
            label(),
            vec![("label", dense(&[], vec![6i64]))],
        ),
        ok(
            "split map value merges",
            split_value,
            spec(|b| {
                b.fixed("v", DType::I64, [3]);
            }),
            vec![("v", dense(&[3], vec![1i64, 2, 3]))],
        ),
        ok(
            "value before key in map entry",
            value_first,
            label(),
            vec![("label", dense(&[], vec![42i64]))],
        ),
        ok(
            "repeated features fields merge",
            two_features,
            ab(),
            vec![("a", dense(&[], vec![1i64])), ("b", dense(&[], vec![2i64]))],
        ),
        ok(
            "unrequested features are ignored",
            example(&[("other", f_bytes(&[b"x"])), ("label", f_i64(&[1]))]),
            label(),
            vec![("label", dense(&[], vec![1i64]))],
        ),
        // --- VarLen
        ok(
            "varlen strings",
            example(&[("k", f_bytes(&[b"a", b"bc"]))]),
            spec(|b| {
                b.var_len("k", DType::String);
            }),
            vec![("k", sparse(1, vec![0, 1], strs(&["a", "bc"]), vec![2]))],
        ),
        ok(
            "varlen missing is empty",
            example(&[]),
            spec(|b| {
                b.var_len("k", DType::I64);
            }),
            vec![("k", sparse(1, vec![], Vec::<i64>::new(), vec![0]))],
        ),
        ok(
            "varlen feature with no list is empty",
            example(&[("k", Vec::new())]),
            spec(|b| {
                b.var_len("k", DType::F32);
            }),
            vec![("k", sparse(1, vec![], Vec::<f32>::new(), vec![0]))],
        ),
        // --- SparseFeature
        ok(
            "sparse 1-d sorted by index",
            example(&[("ix", f_i64(&[3, 0])), ("val", f_f32(&[0.5, 1.5]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::F32, [5]));
            }),
            vec![("sp", sparse(1, vec![0, 3], vec![1.5f32, 0.5], vec![5]))],
        ),
        ok(
            "sparse 2-d",
            example(&[
                ("r", f_i64(&[1, 0])),
                ("c", f_i64(&[0, 2])),
                ("val", f_bytes(&[b"x", b"y"])),
            ]),
            spec(|b| {
                b.sparse(
                    "sp",
                    Sparse::new(["r", "c"], "val", DType::String, [2, 3]),
                );
            }),
            vec![(
                "sp",
                sparse(2, vec![0, 2, 1, 0], strs(&["y", "x"]), vec![2, 3]),
            )],
        ),
        ok(
            "sparse with nothing present is empty",
            example(&[]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [4]));
            }),
            vec![("sp", sparse(1, vec![], Vec::<i64>::new(), vec![4]))],
        ),
        ok(
            "sparse and varlen may share a key",
            example(&[("ix", f_i64(&[1])), ("val", f_i64(&[10]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [2]))
                    .var_len("ix", DType::I64);
            }),
            vec![
                ("sp", sparse(1, vec![1], vec![10i64], vec![2])),
                ("ix", sparse(1, vec![0], vec![1i64], vec![1])),
            ],
        ),
        // --- FixedLenSequence
        ok(
            "fixed sequence rows",
            example(&[("q", f_i64(&[1, 2, 3, 4]))]),
            spec(|b| {
                b.fixed_sequence(
                    "q",
                    FixedSequence::new(DType::I64, [2]).allow_missing(true),
                );
            }),
            vec![("q", dense(&[2, 2], vec![1i64, 2, 3, 4]))],
        ),
        ok(
            "fixed sequence missing allowed",
            example(&[]),
            spec(|b| {
                b.fixed_sequence(
                    "q",
                    FixedSequence::new(DType::F32, [3]).allow_missing(true),
                );
            }),
            vec![("q", dense(&[0, 3], Vec::<f32>::new()))],
        ),
        ok(
            "fixed sequence scalar rows",
            example(&[("q", f_bytes(&[b"a", b"b", b"c"]))]),
            spec(|b| {
                b.fixed_sequence(
                    "q",
                    FixedSequence::new(DType::String, []).allow_missing(true),
                );
            }),
            vec![("q", dense(&[3], strs(&["a", "b", "c"])))],
        ),
        // --- errors
        err(
            "fixed missing without default",
            example(&[]),
            label(),
            Some("label"),
        ),
        err(
            "fixed feature with no list and no default",
            example(&[("label", Vec::new())]),
            label(),
            Some("label"),
        ),
        err(
            "fixed wrong dtype",
            example(&[("label", f_f32(&[1.0]))]),
            label(),
            Some("label"),
        ),
        err(
            "fixed too many values",
            example(&[("v", f_i64(&[1, 2, 3]))]),
            i64s("v"),
            Some("v"),
        ),
        err(
            "fixed too few values",
            example(&[("v", f_i64(&[1]))]),
            i64s("v"),
            Some("v"),
        ),
        err(
            "fixed string given as int64",
            example(&[("s", f_i64(&[1]))]),
            spec(|b| {
                b.fixed("s", DType::String, []);
            }),
            Some("s"),
        ),
        err(
            "varlen wrong dtype",
            example(&[("k", f_i64(&[1]))]),
            spec(|b| {
                b.var_len("k", DType::String);
            }),
            Some("k"),
        ),
        err(
            "fixed sequence wrong dtype",
            example(&[("q", f_f32(&[1.0]))]),
            spec(|b| {
                b.fixed_sequence(
                    "q",
                    FixedSequence::new(DType::I64, []).allow_missing(true),
                );
            }),
            Some("q"),
        ),
        err(
            "fixed sequence not a whole number of rows",
            example(&[("q", f_i64(&[1, 2, 3]))]),
            spec(|b| {
                b.fixed_sequence(
                    "q",
                    FixedSequence::new(DType::I64, [2]).allow_missing(true),
                );
            }),
            Some("q"),
        ),
        err(
            "sparse index out of range",
            example(&[("ix", f_i64(&[5])), ("val", f_i64(&[1]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [5]));
            }),
            Some("sp"),
        ),
        err(
            "sparse negative index",
            example(&[("ix", f_i64(&[-1])), ("val", f_i64(&[1]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [5]));
            }),
            Some("sp"),
        ),
        err(
            "sparse index count differs from values",
            example(&[("ix", f_i64(&[0, 1])), ("val", f_i64(&[1]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [5]));
            }),
            Some("sp"),
        ),
        err(
            "sparse index of float dtype",
            example(&[("ix", f_f32(&[0.0])), ("val", f_i64(&[1]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::I64, [5]));
            }),
            Some("sp"),
        ),
        err(
            "sparse value of wrong dtype",
            example(&[("ix", f_i64(&[0])), ("val", f_i64(&[1]))]),
            spec(|b| {
                b.sparse("sp", Sparse::new(["ix"], "val", DType::F32, [5]));
            }),
            Some("sp"),
        ),
        err(
            "truncated record",
            example(&[("label", f_i64(&[1]))])[..6].to_vec(),
            label(),
            None,
        ),
        err("garbage record", b"\xff\xff\xff".to_vec(), label(), None),
        err(
            "features with a wrong wire type",
            vec![0x08, 0x01],
            label(),
            None,
        ),
        err("end group without start", vec![0x0c], label(), None),
        err(
            "malformed int64 list in a requested feature",
            example(&[("label", ld(3, &[0x0a, 0x05, 0x80]))]),
            label(),
            Some("label"),
        ),
        err(
            "packed floats of odd length",
            example(&[("x", ld(2, &ld(1, &[0, 0, 0])))]),
            spec(|b| {
                b.fixed("x", DType::F32, []);
            }),
            Some("x"),
        ),
        err(
            "list with a wrong wire type",
            example(&[("label", ld(3, &[0x0d, 0, 0, 0, 0]))]),
            label(),
            Some("label"),
        ),
        err(
            "feature list kind with a wrong wire type",
            example(&[("label", vec![0x18, 0x01])]),
            label(),
            Some("label"),
        ),
    ]
}

#[test]
fn table_has_at_least_forty_cases() {
    assert!(cases().len() >= 40, "{} cases", cases().len());
}

#[test]
fn table_cases_single_batched_and_reference_agree() {
    for (n, case) in cases().into_iter().enumerate() {
        let key = format!("cases.tfrecord:{n}");
        let rec = Bytes::from(case.record.clone());
        let single = parse_single_example(&rec, &case.spec, &key);
        let one = std::slice::from_ref(&rec);
        let keys = [key.as_str()];
        let batch = parse_example(
            Records::new(one).with_keys(&keys).unwrap(),
            &case.spec,
        );
        let reference = reference_single(&rec, &case.spec);
        match case.expect {
            Expect::Ok(want) => {
                let got =
                    single.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                for (name, value) in &want {
                    assert_eq!(
                        bits(&got[*name]),
                        bits(value),
                        "{}",
                        case.name
                    );
                }
                let reference = reference.unwrap_or_else(|e| {
                    panic!("{}: reference failed: {e:?}", case.name)
                });
                assert_eq!(
                    bits_all(got.values()),
                    bits_all(&reference),
                    "{}",
                    case.name
                );
                // A batch of one, unbatched, is the single parse.
                let batch =
                    batch.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                for ((b, s), (name, _)) in
                    batch.values().iter().zip(got.values()).zip(got.iter())
                {
                    let row = match b {
                        Value::Dense(t) => Value::Dense(t.index(0).unwrap()),
                        Value::Sparse(t) => {
                            Value::Sparse(t.unstack().unwrap().remove(0))
                        }
                    };
                    assert_eq!(
                        bits(&row),
                        bits(s),
                        "{}: batched {name}",
                        case.name
                    );
                }
            }
            Expect::Err(kind, feature) => {
                let wire_error = matches!(
                    &single, Err(e) if e.message().contains("could not parse")
                );
                for (how, r) in [("single", single), ("batched", batch)] {
                    let e = match r {
                        Ok(v) => panic!("{} ({how}): parsed {v:?}", case.name),
                        Err(e) => e,
                    };
                    assert_eq!(e.kind(), kind, "{} ({how}): {e}", case.name);
                    let text = e.to_string();
                    assert!(
                        text.contains(&key),
                        "{} ({how}) names no key: {text}",
                        case.name
                    );
                    assert_eq!(e.key(), Some(key.as_str()));
                    if let Some(f) = feature {
                        assert_eq!(
                            e.field(),
                            Some(f),
                            "{} ({how}): {text}",
                            case.name
                        );
                        assert!(
                            text.contains(&format!("\"{f}\"")),
                            "{} ({how}): {text}",
                            case.name
                        );
                    }
                    if how == "batched" {
                        assert!(
                            text.contains("example 0 of the batch"),
                            "{text}"
                        );
                    }
                }
                // Where prost decodes the bytes, the reference finds the same
                // problem with the same feature.
                match reference {
                    Ok(v) => panic!("{}: reference parsed {v:?}", case.name),
                    Err(RefError::Decode) => {
                        assert!(wire_error, "{}", case.name)
                    }
                    Err(RefError::Feature(f)) => {
                        assert_eq!(Some(f.as_str()), feature, "{}", case.name)
                    }
                }
            }
        }
    }
}

#[test]
fn errors_in_a_batch_name_the_failing_example_and_its_key() {
    let spec = spec(|b| {
        b.fixed("label", DType::I64, []);
    });
    let good = Bytes::from(example(&[("label", f_i64(&[1]))]));
    let bad = Bytes::from(example(&[("label", f_i64(&[1, 2]))]));
    let pair = [good.clone(), bad];
    let e = parse_example(
        Records::new(&pair).with_keys(&["f:0", "f:1"]).unwrap(),
        &spec,
    )
    .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.key(), Some("f:1"));
    assert!(e.to_string().contains("example 1 of the batch"), "{e}");
    let e = Records::new(&[good]).with_keys(&["a", "b"]).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}

#[test]
fn spec_build_rejects_bad_features() {
    let mut b = FeatureSpec::builder();
    b.fixed("x", DType::U8, []);
    let e = b.build().unwrap_err();
    assert_eq!((e.kind(), e.field()), (Kind::InvalidArgument, Some("x")));
    let mut b = FeatureSpec::builder();
    b.fixed("x", DType::I64, []).var_len("x", DType::I64);
    assert_eq!(b.build().unwrap_err().field(), Some("x"));
    let mut b = FeatureSpec::builder();
    b.fixed_with_default("d", DType::I64, [2], Tensor::scalar(1i64));
    assert_eq!(b.build().unwrap_err().field(), Some("d"));
    let mut b = FeatureSpec::builder();
    b.fixed_with_default("d", DType::I64, [], Tensor::scalar(1.0f32));
    assert_eq!(b.build().unwrap_err().field(), Some("d"));
    let mut b = FeatureSpec::builder();
    b.sparse("s", Sparse::new(["a", "b"], "v", DType::I64, [3]));
    assert_eq!(b.build().unwrap_err().field(), Some("s"));
    let mut b = FeatureSpec::builder();
    b.sparse(
        "s",
        Sparse::new(Vec::<String>::new(), "v", DType::I64, Shape::scalar()),
    );
    assert_eq!(b.build().unwrap_err().field(), Some("s"));
    let mut b = FeatureSpec::builder();
    b.fixed_sequence(
        "q",
        FixedSequence::new(DType::I64, [0]).allow_missing(true),
    );
    assert_eq!(b.build().unwrap_err().field(), Some("q"));
    let mut b = FeatureSpec::builder();
    b.fixed_sequence(
        "q",
        FixedSequence::new(DType::I64, [])
            .allow_missing(true)
            .default_value(Tensor::vector(vec![1i64, 2])),
    );
    assert_eq!(b.build().unwrap_err().field(), Some("q"));
}

#[test]
fn strings_are_slices_of_the_record() {
    let rec = Bytes::from(example(&[("s", f_bytes(&[b"hello"]))]));
    let spec = spec(|b| {
        b.fixed("s", DType::String, []);
    });
    let p = parse_single_example(&rec, &spec, "").unwrap();
    let s = p["s"].dense().unwrap().scalar_value::<Bytes>().unwrap();
    let range = rec.as_ptr_range();
    assert!(range.contains(&s.as_ptr()), "string was copied");
}

#[test]
fn batch_pads_fixed_sequences_with_the_default() {
    let spec = spec(|b| {
        b.fixed_sequence(
            "q",
            FixedSequence::new(DType::I64, [2])
                .allow_missing(true)
                .default_value(Tensor::scalar(-1i64)),
        )
        .var_len("k", DType::I64);
    });
    let recs = [
        Bytes::from(example(&[
            ("q", f_i64(&[1, 2])),
            ("k", f_i64(&[5, 6, 7])),
        ])),
        Bytes::from(example(&[("q", f_i64(&[3, 4, 5, 6]))])),
        Bytes::from(example(&[])),
    ];
    let p = parse_example(&recs, &spec).unwrap();
    let q = p["q"].dense().unwrap();
    assert_eq!(q.dims(), [3, 2, 2]);
    assert_eq!(
        q.as_slice::<i64>().unwrap(),
        [1, 2, -1, -1, 3, 4, 5, 6, -1, -1, -1, -1]
    );
    let k = p["k"].sparse().unwrap();
    assert_eq!(k.dims(), [3, 3]);
    assert_eq!(k.indices().as_slice::<i64>().unwrap(), [0, 0, 0, 1, 0, 2]);
}

#[test]
fn empty_batch_gives_empty_outputs() {
    let spec = spec(|b| {
        b.fixed("a", DType::F32, [2]).var_len("k", DType::String);
    });
    let p = parse_example(Records::new(&[]), &spec).unwrap();
    assert_eq!(p["a"].dense().unwrap().dims(), [0, 2]);
    assert_eq!(p["k"].sparse().unwrap().dims(), [0, 0]);
}

#[test]
fn sequence_example_errors_name_feature_and_step() {
    let ctx = spec(|b| {
        b.fixed("id", DType::I64, []);
    });
    let seq = spec(|b| {
        b.fixed_sequence(
            "x",
            FixedSequence::new(DType::F32, [2]).allow_missing(false),
        )
        .var_len("t", DType::String);
    });
    let good_ctx = [("id", f_i64(&[1]))];
    // Right shape.
    let rec = Bytes::from(seq_example(
        &good_ctx,
        &[
            ("x", vec![f_f32(&[1.0, 2.0]), f_f32(&[3.0, 4.0])]),
            ("t", vec![f_bytes(&[b"a"]), Vec::new()]),
        ],
    ));
    let got = parse_single_sequence_example(&rec, &ctx, &seq, "s:0").unwrap();
    let (c, s) = (&got.context, &got.feature_lists);
    assert_eq!(c["id"].dense().unwrap().scalar_value::<i64>().unwrap(), 1);
    assert_eq!(s["x"].dense().unwrap().dims(), [2, 2]);
    assert_eq!(s["t"].sparse().unwrap().dims(), [2, 1]);
    let check = |rec: Vec<u8>, feature: &str, needle: &str| {
        let e = parse_single_sequence_example(
            &Bytes::from(rec),
            &ctx,
            &seq,
            "s:1",
        )
        .unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        assert_eq!(e.field(), Some(feature), "{e}");
        let text = e.to_string();
        assert!(text.contains("s:1") && text.contains(needle), "{text}");
    };
    // A step with three values.
    check(
        seq_example(&good_ctx, &[("x", vec![f_f32(&[1.0, 2.0, 3.0])])]),
        "x",
        "step 0",
    );
    // A step of the wrong dtype.
    check(
        seq_example(
            &good_ctx,
            &[("x", vec![f_f32(&[1.0, 2.0]), f_i64(&[1, 2])])],
        ),
        "x",
        "step 1",
    );
    // A required feature list missing.
    check(seq_example(&good_ctx, &[]), "x", "required");
    // A missing context feature.
    check(seq_example(&[], &[("x", vec![])]), "id", "required");
    // A sequence spec with a Fixed feature.
    let bad_seq = spec(|b| {
        b.fixed("x", DType::F32, []);
    });
    let e =
        parse_single_sequence_example(&rec, &ctx, &bad_seq, "").unwrap_err();
    assert_eq!(e.field(), Some("x"));
}

// ---------------------------------------------------------------------------
// The property test: random Examples written in random (valid) ways, random
// specs; the fast parser must agree with prost + the reference.

#[derive(Debug, Clone)]
enum Vals {
    I64(Vec<i64>),
    F32(Vec<f32>),
    Bytes(Vec<Vec<u8>>),
    Unset,
}

impl Vals {
    fn dtype(&self) -> Option<DType> {
        match self {
            Vals::I64(_) => Some(DType::I64),
            Vals::F32(_) => Some(DType::F32),
            Vals::Bytes(_) => Some(DType::String),
            Vals::Unset => None,
        }
    }

    fn len(&self) -> usize {
        match self {
            Vals::I64(v) => v.len(),
            Vals::F32(v) => v.len(),
            Vals::Bytes(v) => v.len(),
            Vals::Unset => 0,
        }
    }
}

/// How to write things: random choices consumed as the writer goes.
#[derive(Debug, Clone)]
struct Style(Vec<u8>, usize);

impl Style {
    fn pick(&mut self, n: u8) -> u8 {
        let b = self
            .0
            .get(self.1 % self.0.len().max(1))
            .copied()
            .unwrap_or(0);
        self.1 += 1;
        b % n
    }

    fn maybe_unknown(&mut self, out: &mut Vec<u8>) {
        match self.pick(8) {
            0 => out.extend([0xa0, 0x06, 0x2a]), // field 100 varint
            1 => out.extend(ld(77, b"skip me")),
            2 => out.extend([0x7d, 1, 2, 3, 4]), // field 15 fixed32
            _ => {}
        }
    }
}

fn write_list(v: &Vals, style: &mut Style) -> Vec<u8> {
    let mut out = Vec::new();
    match v {
        Vals::I64(x) => {
            let cut = style.pick(x.len() as u8 + 1) as usize;
            for part in [&x[..cut], &x[cut..]] {
                if style.pick(2) == 0 {
                    if !part.is_empty() || style.pick(2) == 0 {
                        out.extend(packed_i64(part));
                    }
                } else {
                    out.extend(unpacked_i64(part));
                }
                style.maybe_unknown(&mut out);
            }
        }
        Vals::F32(x) => {
            let cut = style.pick(x.len() as u8 + 1) as usize;
            for part in [&x[..cut], &x[cut..]] {
                if style.pick(2) == 0 {
                    out.extend(packed_f32(part));
                } else {
                    out.extend(unpacked_f32(part));
                }
                style.maybe_unknown(&mut out);
            }
        }
        Vals::Bytes(x) => {
            for s in x {
                out.extend(ld(1, s));
                style.maybe_unknown(&mut out);
            }
        }
        Vals::Unset => {}
    }
    out
}

fn write_feature(v: &Vals, style: &mut Style) -> Vec<u8> {
    let tag = match v {
        Vals::Bytes(_) => 1,
        Vals::F32(_) => 2,
        Vals::I64(_) => 3,
        Vals::Unset => {
            let mut out = Vec::new();
            style.maybe_unknown(&mut out);
            return out;
        }
    };
    let mut out = Vec::new();
    // A decoy list of another kind first, which the real one replaces.
    if style.pick(4) == 0 {
        out.extend(ld(tag % 3 + 1, &[]));
    }
    style.maybe_unknown(&mut out);
    let list = write_list(v, style);
    if style.pick(3) == 0 && !list.is_empty() {
        // The list split over two fields of the same kind, which merge. The
        // split falls on a field boundary of the list's content.
        let mut r = 0;
        let mut bounds = vec![0];
        while r < list.len() {
            r += field_len(&list[r..]);
            bounds.push(r);
        }
        let at = bounds[style.pick(bounds.len() as u8) as usize];
        out.extend(ld(tag, &list[..at]));
        out.extend(ld(tag, &list[at..]));
    } else {
        out.extend(ld(tag, &list));
    }
    out
}

/// The length of the protobuf field at the start of `b`.
fn field_len(b: &[u8]) -> usize {
    let mut i = 0;
    let mut read = || {
        let mut v = 0u64;
        let mut s = 0;
        loop {
            let x = b[i];
            i += 1;
            v |= u64::from(x & 0x7f) << s;
            s += 7;
            if x < 0x80 {
                return v;
            }
        }
    };
    let k = read();
    match k & 7 {
        0 => {
            read();
        }
        1 => i += 8,
        2 => {
            let n = read() as usize;
            i += n;
        }
        5 => i += 4,
        _ => unreachable!(),
    }
    i
}

fn write_example(entries: &[(String, Vals)], style: &mut Style) -> Vec<u8> {
    let mut out = Vec::new();
    let mut features = Vec::new();
    for (name, v) in entries {
        // Sometimes an earlier entry of the same name, which loses.
        if style.pick(6) == 0 {
            let mut entry = ld(1, name.as_bytes());
            entry.extend(ld(2, &f_bytes(&[b"decoy"])));
            features.extend(ld(1, &entry));
        }
        let feature = write_feature(v, style);
        let mut entry = Vec::new();
        let key_first = style.pick(4) != 0;
        if key_first {
            entry.extend(ld(1, name.as_bytes()));
        }
        style.maybe_unknown(&mut entry);
        if !feature.is_empty() || style.pick(2) == 0 {
            entry.extend(ld(2, &feature));
        }
        if !key_first {
            entry.extend(ld(1, name.as_bytes()));
        }
        features.extend(ld(1, &entry));
        // Sometimes close this `features` field and open another.
        if style.pick(5) == 0 {
            out.extend(ld(1, &features));
            features.clear();
            style.maybe_unknown(&mut out);
        }
    }
    out.extend(ld(1, &features));
    out
}

fn vals_strategy() -> impl Strategy<Value = Vals> {
    prop_oneof![
        4 => prop::collection::vec(any::<i64>(), 0..5).prop_map(Vals::I64),
        4 => prop::collection::vec(
            prop_oneof![any::<f32>().prop_filter("not nan", |f| !f.is_nan()), Just(0.0f32)],
            0..5
        )
        .prop_map(Vals::F32),
        3 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), 0..4)
            .prop_map(Vals::Bytes),
        1 => Just(Vals::Unset),
        // Small non-negative int64s, to serve as sparse indices.
        3 => prop::collection::vec(0i64..4, 0..4).prop_map(Vals::I64),
    ]
}

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

/// A random spec over the names `a..e`, whose choices are sometimes
/// consistent with `schema` (the first example's values) and sometimes
/// not.
fn make_spec(schema: &[(String, Vals)], picks: &[u8]) -> FeatureSpec {
    let mut b = FeatureSpec::builder();
    let mut p = picks.iter().copied().cycle();
    let mut next = |n: u8| p.next().unwrap_or(0) % n;
    let dtypes = [DType::I64, DType::F32, DType::String];
    for name in NAMES {
        let found = schema.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        let natural = found.and_then(Vals::dtype);
        let dtype = match (next(5), natural) {
            (0, _) | (_, None) => dtypes[next(3) as usize],
            (_, Some(d)) => d,
        };
        let len = found.map_or(1, Vals::len);
        match next(6) {
            0 => b.fixed(name, dtype, [len]),
            1 => {
                let default = match dtype {
                    DType::I64 => Tensor::new([len], vec![7i64; len]),
                    DType::F32 => Tensor::new([len], vec![0.25f32; len]),
                    _ => {
                        Tensor::new([len], vec![Bytes::from_static(b"d"); len])
                    }
                }
                .unwrap();
                b.fixed_with_default(name, dtype, [len], default)
            }
            2 => b.var_len(name, dtype),
            3 => {
                let rows = [1usize, 2][next(2) as usize];
                // parse_example needs allow_missing, as TensorFlow does.
                b.fixed_sequence(
                    name,
                    FixedSequence::new(dtype, [rows]).allow_missing(true),
                )
            }
            _ => {
                let value = NAMES[next(5) as usize];
                let size = [1usize, 3, 4][next(3) as usize];
                b.sparse(
                    format!("sp_{name}"),
                    Sparse::new([name], value, dtype, [size]),
                )
            }
        };
    }
    b.build().unwrap()
}

fn entries_strategy() -> impl Strategy<Value = Vec<(String, Vals)>> {
    prop::collection::vec((0usize..5, vals_strategy()), 0..6).prop_map(|v| {
        let mut seen = Vec::new();
        v.into_iter()
            .filter_map(|(i, vals)| {
                let n = NAMES[i].to_string();
                if seen.contains(&n) {
                    None
                } else {
                    seen.push(n.clone());
                    Some((n, vals))
                }
            })
            .collect()
    })
}

fn same_outcome(
    fast: feedstock::Result<Parsed>,
    slow: Result<Vec<Value>, RefError>,
) -> Result<(), TestCaseError> {
    match (fast, slow) {
        (Ok(f), Ok(s)) => {
            prop_assert_eq!(bits_all(f.values()), bits_all(&s));
        }
        (Err(e), Err(RefError::Feature(name))) => {
            prop_assert_eq!(e.kind(), Kind::InvalidArgument);
            prop_assert_eq!(e.field(), Some(name.as_str()));
        }
        (f, s) => {
            return Err(TestCaseError::fail(format!(
                "fast {f:?} but reference {s:?}"
            )))
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 384 }))]

    #[test]
    fn fast_parser_agrees_with_prost_on_random_examples(
        entries in entries_strategy(),
        style in prop::collection::vec(any::<u8>(), 1..64),
        picks in prop::collection::vec(any::<u8>(), 1..32),
    ) {
        let spec = make_spec(&entries, &picks);
        let bytes = Bytes::from(write_example(&entries, &mut Style(style, 0)));
        same_outcome(
            parse_single_example(&bytes, &spec, "p:0"),
            reference_single(&bytes, &spec),
        )?;
    }

    #[test]
    fn fast_batches_agree_with_stacked_reference(
        batch in prop::collection::vec(
            (entries_strategy(), prop::collection::vec(any::<u8>(), 1..16)),
            0..4,
        ),
        picks in prop::collection::vec(any::<u8>(), 1..32),
    ) {
        let schema = batch.first().map(|(e, _)| e.clone()).unwrap_or_default();
        let spec = make_spec(&schema, &picks);
        let records: Vec<Bytes> = batch
            .iter()
            .map(|(e, s)| Bytes::from(write_example(e, &mut Style(s.clone(), 0))))
            .collect();
        same_outcome(
            parse_example(&records, &spec),
            reference_batch(&records, &spec),
        )?;
    }

    #[test]
    fn prost_encoded_examples_parse_like_the_reference(
        entries in entries_strategy(),
        picks in prop::collection::vec(any::<u8>(), 1..32),
    ) {
        let spec = make_spec(&entries, &picks);
        let ex = proto::Example {
            features: Some(proto::Features {
                feature: entries
                    .iter()
                    .map(|(n, v)| {
                        let kind = match v {
                            Vals::I64(x) => Some(FKind::Int64List(proto::Int64List { value: x.clone() })),
                            Vals::F32(x) => Some(FKind::FloatList(proto::FloatList { value: x.clone() })),
                            Vals::Bytes(x) => Some(FKind::BytesList(proto::BytesList {
                                value: x.iter().map(|b| Bytes::from(b.clone())).collect(),
                            })),
                            Vals::Unset => None,
                        };
                        (n.clone(), proto::Feature { kind })
                    })
                    .collect(),
            }),
        };
        let bytes = Bytes::from(ex.encode_to_vec());
        same_outcome(
            parse_single_example(&bytes, &spec, ""),
            reference_single(&bytes, &spec),
        )?;
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_prost_messages_agree(
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let spec = spec(|b| {
            b.var_len("a", DType::I64).var_len("b", DType::F32).var_len("c", DType::String);
        });
        let bytes = Bytes::from(bytes);
        if let Err(e) = parse_single_example(&bytes, &spec, "") {
            prop_assert_eq!(e.kind(), Kind::InvalidArgument);
        }
        // Whatever prost makes of the bytes, written out again, parses
        // the same both ways. (Not the raw bytes: prost does not check
        // the wire type of a map field, so it accepts some invalid
        // inputs that the fast parser rejects.)
        if let Ok(m) = proto::Example::decode(&bytes[..]) {
            let canonical = Bytes::from(m.encode_to_vec());
            same_outcome(
                parse_single_example(&canonical, &spec, ""),
                reference_single(&canonical, &spec),
            )?;
        }
    }
}

// ---------------------------------------------------------------------------
// Map entries as protobuf writes them: key and value always present.

/// Hex to bytes.
fn unhex(s: &str) -> Bytes {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect::<Vec<u8>>()
        .into()
}

#[test]
fn tensorflow_written_empty_keys_and_values_parse_as_in_tensorflow() {
    // TensorFlow's bytes for {"a": [1], "probe": Feature()}: the empty
    // Feature is written as `12 00`.
    let rec = unhex("0a170a0a0a016112051a030a01010a090a0570726f62651200");
    let s = spec(|b| {
        b.fixed("a", DType::I64, [])
            .var_len("probe", DType::F32)
            .fixed_with_default("p2", DType::F32, [], Tensor::scalar(0.5f32));
    });
    let got = parse_single_example(&rec, &s, "tf").unwrap();
    assert_eq!(got["a"].dense().unwrap().scalar_value::<i64>().unwrap(), 1);
    assert_eq!(got["probe"].sparse().unwrap().dims(), [0]);
    let p2 = got["p2"].dense().unwrap().scalar_value::<f32>().unwrap();
    assert_eq!(p2, 0.5);
    // {"": [7]}: the key is written as `0a 00`.
    let rec = unhex("0a0b0a090a0012051a030a0107");
    let s = spec(|b| {
        b.fixed("", DType::I64, []);
    });
    let got = parse_single_example(&rec, &s, "tf").unwrap();
    assert_eq!(got[""].dense().unwrap().scalar_value::<i64>().unwrap(), 7);
}

#[test]
fn tensorflow_written_sequence_example_with_empty_parts_parses() {
    // context {"c": [3]}; feature lists "empty" (no steps), "s" ([1.5],
    // then an empty Feature) and "" ([b"x"]), as TensorFlow wrote them.
    let rec = unhex(concat!(
        "0a0c0a0a0a016312051a030a0103122b0a090a05656d70747912000a110a017312",
        "0c0a0812060a040000c03f0a000a0b0a0012070a050a030a0178",
    ));
    let ctx = spec(|b| {
        b.fixed("c", DType::I64, []);
    });
    let seq = spec(|b| {
        b.var_len("s", DType::F32)
            .fixed_sequence(
                "empty",
                FixedSequence::new(DType::I64, []).allow_missing(true),
            )
            .var_len("", DType::String);
    });
    let got = parse_single_sequence_example(&rec, &ctx, &seq, "tf").unwrap();
    let c = got.context["c"].dense().unwrap();
    assert_eq!(c.scalar_value::<i64>().unwrap(), 3);
    let s = got.feature_lists["s"].sparse().unwrap();
    assert_eq!(s.dims(), [2, 1]);
    assert_eq!(s.values().as_slice::<f32>().unwrap(), [1.5]);
    assert_eq!(got.feature_lists["empty"].dense().unwrap().dims(), [0]);
    assert_eq!(got.feature_lists[""].sparse().unwrap().dims(), [1, 1]);
}

#[test]
fn a_sparse_feature_of_size_zero_is_empty_as_in_tensorflow() {
    // TensorFlow: SparseFeature("ix", "v", tf.float32, 0) gives
    // dense_shape [0] when the example has no values; an index is then
    // out of range.
    let s = spec(|b| {
        b.sparse("sp", Sparse::new(["ix"], "v", DType::F32, [0]));
    });
    let got = parse_single_example(&Bytes::new(), &s, "r").unwrap();
    let sp = got["sp"].sparse().unwrap();
    assert_eq!(sp.dims(), [0]);
    assert_eq!(sp.nnz(), 0);
    let rec =
        Bytes::from(example(&[("ix", f_i64(&[0])), ("v", f_f32(&[1.0]))]));
    let e = parse_single_example(&rec, &s, "r").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
}
