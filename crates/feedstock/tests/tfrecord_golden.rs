//! The golden TFRecord files written by TensorFlow decode exactly as their
//! sidecars (TensorFlow's own reading of them) say, through every reader,
//! and what feedstock writes is byte-identical to what TensorFlow wrote.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use base64::Engine as _;
use bytes::Bytes;
use feedstock::io::tfrecord::{ReaderBuilder, Record, WriterBuilder};
use feedstock::io::Compression;
use feedstock::proto::{feature, Example, Feature, Features, SequenceExample};
use prost::Message;
use serde_json::Value;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden")
        .join(name)
}

fn sidecar(name: &str) -> Value {
    let text = std::fs::read_to_string(golden(&format!("{name}.json")))
        .expect("sidecar");
    serde_json::from_str(&text).expect("sidecar JSON")
}

fn compression(side: &Value) -> Compression {
    side["compression"].as_str().unwrap().parse().unwrap()
}

/// The records a sidecar lists (following `records_same_as`).
fn expected_records(side: &Value) -> Vec<Value> {
    match side.get("records_same_as") {
        Some(other) => {
            let other = other.as_str().unwrap().trim_end_matches(".json");
            expected_records(&sidecar(other))
        }
        None => side["records"].as_array().unwrap().clone(),
    }
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap())
        .unwrap()
}

/// A reader that hands out one byte per call.
struct OneByte<R>(R);

impl<R: Read> Read for OneByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

/// Reads `name` through the path opener, the in-memory reader and a
/// one-byte-at-a-time stream, checks that all three agree, and returns the
/// records.
fn read_every_way(name: &str, c: Compression) -> Vec<Record> {
    let mut b = ReaderBuilder::new();
    b.compression(c);
    let by_path: Vec<Record> = b
        .open(golden(name))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let bytes = Bytes::from(std::fs::read(golden(name)).unwrap());
    let in_memory: Vec<Record> = b
        .from_bytes(bytes.clone())
        .collect::<Result<_, _>>()
        .unwrap();
    let trickled: Vec<Record> = b
        .clone()
        .buffer_capacity(1)
        .from_reader(OneByte(&bytes[..]))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(by_path, in_memory, "{name}: path vs memory");
    assert_eq!(by_path, trickled, "{name}: path vs one byte at a time");
    by_path
}

fn check_records(name: &str) -> (Vec<Record>, Vec<Value>) {
    let side = sidecar(name);
    let records = read_every_way(name, compression(&side));
    let expected = expected_records(&side);
    assert_eq!(records.len() as u64, side["num_records"].as_u64().unwrap());
    assert_eq!(records.len(), expected.len());
    let mut offset = 0;
    for (got, want) in records.iter().zip(&expected) {
        assert_eq!(got.position.index, want["index"].as_u64().unwrap());
        assert_eq!(
            got.position.offset, offset,
            "{name} record {}",
            got.position.index
        );
        assert_eq!(got.value.len() as u64, want["length"].as_u64().unwrap());
        assert_eq!(got.value[..], b64(&want["b64"])[..]);
        offset += 16 + got.value.len() as u64;
    }
    (records, expected)
}

/// A feature as the sidecars write it: `{"kind", "values"}`.
fn feature_json(f: &Feature) -> Value {
    let (kind, values): (&str, Vec<Value>) = match &f.kind {
        Some(feature::Kind::BytesList(l)) => (
            "bytes_list",
            l.value
                .iter()
                .map(|b| Value::from(std::str::from_utf8(b).unwrap()))
                .collect(),
        ),
        Some(feature::Kind::FloatList(l)) => {
            ("float_list", l.value.iter().map(|&x| f32_bits(x)).collect())
        }
        Some(feature::Kind::Int64List(l)) => (
            "int64_list",
            l.value.iter().map(|&x| Value::from(x)).collect(),
        ),
        None => panic!("feature without a kind"),
    };
    serde_json::json!({ "kind": kind, "values": values })
}

/// Floats are compared as `f32` bit patterns: the sidecar holds each as
/// the `f64` of the `f32`, which a JSON parser may round by an ulp.
fn f32_bits(x: f32) -> Value {
    Value::from(format!("f32:{:08x}", x.to_bits()))
}

/// The sidecar's view with float values as `f32` bit patterns.
fn normalize(want: &Value) -> Value {
    match want {
        Value::Object(m) if m.get("kind") == Some(&"float_list".into()) => {
            let values = m["values"].as_array().unwrap();
            let values: Vec<Value> = values
                .iter()
                .map(|v| {
                    let x = match v.as_str() {
                        Some("nan") => f64::NAN,
                        Some("inf") => f64::INFINITY,
                        Some("-inf") => f64::NEG_INFINITY,
                        _ => v.as_f64().unwrap(),
                    };
                    f32_bits(x as f32)
                })
                .collect();
            serde_json::json!({ "kind": "float_list", "values": values })
        }
        Value::Object(m) => Value::Object(
            m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn features_json(f: &Option<Features>) -> Value {
    let map: BTreeMap<&String, Value> = f
        .as_ref()
        .map(|f| {
            f.feature
                .iter()
                .map(|(k, v)| (k, feature_json(v)))
                .collect()
        })
        .unwrap_or_default();
    serde_json::to_value(map).unwrap()
}

#[test]
fn examples_decode_as_tensorflow_read_them_for_every_compression() {
    for name in [
        "examples.tfrecord",
        "examples.gzip.tfrecord",
        "examples.zlib.tfrecord",
    ] {
        let (records, expected) = check_records(name);
        for (rec, want) in records.iter().zip(&expected) {
            let ex = Example::decode(rec.value.clone()).unwrap();
            assert_eq!(
                features_json(&ex.features),
                normalize(&want["example"]),
                "{name}"
            );
        }
    }
}

#[test]
fn sequence_examples_decode_as_tensorflow_read_them() {
    let (records, expected) = check_records("sequence_examples.tfrecord");
    for (rec, want) in records.iter().zip(&expected) {
        let se = SequenceExample::decode(rec.value.clone()).unwrap();
        assert_eq!(features_json(&se.context), normalize(&want["context"]));
        let lists: BTreeMap<&String, Vec<Value>> = se
            .feature_lists
            .as_ref()
            .unwrap()
            .feature_list
            .iter()
            .map(|(k, l)| (k, l.feature.iter().map(feature_json).collect()))
            .collect();
        assert_eq!(
            serde_json::to_value(lists).unwrap(),
            normalize(&want["feature_lists"])
        );
    }
}

#[test]
fn compressed_goldens_decompress_to_the_plain_golden() {
    let plain = std::fs::read(golden("examples.tfrecord")).unwrap();
    for name in ["examples.gzip.tfrecord", "examples.zlib.tfrecord"] {
        let side = sidecar(name);
        assert_eq!(side["decompressed_equals"], "examples.tfrecord");
        let file = std::fs::File::open(golden(name)).unwrap();
        let mut out = Vec::new();
        compression(&side)
            .reader(file)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, plain, "{name}");
    }
}

#[test]
fn writer_output_equals_tensorflow_bytes() {
    for name in ["examples.tfrecord", "sequence_examples.tfrecord"] {
        let golden_bytes = std::fs::read(golden(name)).unwrap();
        let records = expected_records(&sidecar(name));
        for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
            let mut w =
                WriterBuilder::new().compression(c).from_writer(Vec::new());
            for r in &records {
                w.write_record(&b64(&r["b64"])).unwrap();
            }
            let written = w.finish().unwrap();
            let mut plain = Vec::new();
            c.reader(&written[..]).read_to_end(&mut plain).unwrap();
            assert_eq!(plain, golden_bytes, "{name} written with {c}");
            if c == Compression::None {
                assert_eq!(written, golden_bytes);
            }
        }
    }
}

#[test]
fn path_opener_detects_compression_from_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(golden("examples.tfrecord")).unwrap();
    for (src, ext) in [
        ("examples.gzip.tfrecord", "gz"),
        ("examples.zlib.tfrecord", "zz"),
        ("examples.zlib.tfrecord", "zlib"),
        ("examples.tfrecord", "tfrecord"),
    ] {
        let path = dir.path().join(format!("copy.{ext}"));
        std::fs::copy(golden(src), &path).unwrap();
        let mut count = 0;
        let mut last_end = 0;
        for rec in ReaderBuilder::new().open(&path).unwrap() {
            let rec = rec.unwrap();
            last_end = rec.next_position().offset;
            count += 1;
        }
        assert_eq!(count, 8, "{ext}");
        assert_eq!(last_end, plain.len() as u64, "{ext}");
    }
}
