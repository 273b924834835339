//! `feedstock cat` and `feedstock count`, run as the built binary on the
//! golden files TensorFlow wrote and on damaged copies of them.

use std::path::{Path, PathBuf};
use std::process::Output;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::support::{feedstock, golden, path_str, sidecar};

fn records_of(name: &str) -> Vec<Value> {
    let side = sidecar(name);
    match side.get("records_same_as") {
        Some(other) => {
            records_of(other.as_str().unwrap().trim_end_matches(".json"))
        }
        None => side["records"].as_array().unwrap().clone(),
    }
}

fn stdout_lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A sidecar feature (`{"kind", "values"}`) in protobuf's JSON mapping.
fn canonical_feature(f: &Value) -> Value {
    let values = f["values"].as_array().unwrap();
    let (kind, values): (&str, Vec<Value>) = match f["kind"].as_str().unwrap()
    {
        "bytes_list" => (
            "bytesList",
            values
                .iter()
                .map(|v| b64(v.as_str().unwrap()).into())
                .collect(),
        ),
        "int64_list" => (
            "int64List",
            values
                .iter()
                .map(|v| v.as_i64().unwrap().to_string().into())
                .collect(),
        ),
        "float_list" => ("floatList", values.clone()),
        other => panic!("kind {other}"),
    };
    if values.is_empty() {
        json!({ kind: {} })
    } else {
        json!({ kind: { "value": values } })
    }
}

fn canonical_features(map: &Value) -> Value {
    let map = map.as_object().unwrap();
    let feature: serde_json::Map<String, Value> = map
        .iter()
        .map(|(k, v)| (k.clone(), canonical_feature(v)))
        .collect();
    if feature.is_empty() {
        json!({})
    } else {
        json!({ "feature": feature })
    }
}

/// Replaces every number inside a `floatList` by its `f32` bit pattern, so
/// that values compare exactly whatever decimal spelling they came in.
fn floats_as_bits(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if k == "floatList" {
                        let mut v = v.clone();
                        if let Some(list) = v.get_mut("value") {
                            for x in list.as_array_mut().unwrap() {
                                if let Some(f) = x.as_f64() {
                                    *x = format!(
                                        "{:08x}",
                                        (f as f32).to_bits()
                                    )
                                    .into();
                                }
                            }
                        }
                        v
                    } else {
                        floats_as_bits(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => {
            Value::Array(a.iter().map(floats_as_bits).collect())
        }
        other => other.clone(),
    }
}

#[test]
fn cat_prints_every_golden_example_in_canonical_json() {
    for name in [
        "examples.tfrecord",
        "examples.gzip.tfrecord",
        "examples.zlib.tfrecord",
    ] {
        let c = sidecar(name)["compression"]
            .as_str()
            .unwrap()
            .to_lowercase();
        let path = golden(name);
        let out = feedstock(&["cat", "--compression", &c, path_str(&path)]);
        assert!(out.status.success(), "{name}: {:?}", out);
        let lines = stdout_lines(&out);
        let want = records_of(name);
        assert_eq!(lines.len(), want.len(), "{name}");
        for (i, (line, rec)) in lines.iter().zip(&want).enumerate() {
            let expected = json!({
                "key": format!("{}:{i}", path_str(&path)),
                "example": { "features": canonical_features(&rec["example"]) },
            });
            assert_eq!(
                floats_as_bits(line),
                floats_as_bits(&expected),
                "{name}"
            );
        }
    }
}

#[test]
fn cat_spells_values_as_python_json_format_does() {
    let path = golden("examples.tfrecord");
    let out = feedstock(&["cat", path_str(&path)]);
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    // TensorFlow stored 2.655f32 (2.6549999713897705 as a double); Python
    // protobuf prints it as 2.655 and 0 as 0.0.
    assert!(
        first.contains(r#""floatList":{"value":[2.655,0.0]}"#),
        "{first}"
    );
    assert!(
        first.contains(r#""int64List":{"value":["700000"]}"#),
        "{first}"
    );
    assert!(first.contains(r#""clicks":{"int64List":{}}"#), "{first}");
    let fifth = text.lines().nth(5).unwrap();
    assert!(
        fifth.contains(r#"["-9223372036854775808","9223372036854775807"]"#),
        "{fifth}"
    );
}

#[test]
fn cat_prints_sequence_examples_as_such() {
    let path = golden("sequence_examples.tfrecord");
    let out = feedstock(&["cat", path_str(&path)]);
    assert!(out.status.success(), "{out:?}");
    let lines = stdout_lines(&out);
    let want = records_of("sequence_examples.tfrecord");
    assert_eq!(lines.len(), want.len());
    for (i, (line, rec)) in lines.iter().zip(&want).enumerate() {
        let lists: serde_json::Map<String, Value> = rec["feature_lists"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, steps)| {
                let steps: Vec<Value> = steps
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(canonical_feature)
                    .collect();
                (k.clone(), json!({ "feature": steps }))
            })
            .collect();
        let expected = json!({
            "key": format!("{}:{i}", path_str(&path)),
            "sequence_example": {
                "context": canonical_features(&rec["context"]),
                "featureLists": { "featureList": lists },
            },
        });
        assert_eq!(floats_as_bits(line), floats_as_bits(&expected));
    }
}

#[test]
fn cat_raw_prints_the_record_bytes() {
    let path = golden("examples.tfrecord");
    let out = feedstock(&["cat", "--raw", path_str(&path)]);
    assert!(out.status.success());
    let lines = stdout_lines(&out);
    let want = records_of("examples.tfrecord");
    assert_eq!(lines.len(), want.len());
    for (i, (line, rec)) in lines.iter().zip(&want).enumerate() {
        let expected = json!({
            "key": format!("{}:{i}", path_str(&path)),
            "bytes_base64": rec["b64"],
        });
        assert_eq!(line, &expected);
    }
}

#[test]
fn cat_detects_compression_from_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let plain = feedstock(&["cat", path_str(&golden("examples.tfrecord"))]);
    let plain = stdout_lines(&plain);
    for (src, ext) in [
        ("examples.gzip.tfrecord", "gz"),
        ("examples.zlib.tfrecord", "zz"),
    ] {
        let path = dir.path().join(format!("copy.tfrecord.{ext}"));
        std::fs::copy(golden(src), &path).unwrap();
        let out = feedstock(&["cat", path_str(&path)]);
        assert!(out.status.success(), "{out:?}");
        let lines = stdout_lines(&out);
        assert_eq!(lines.len(), plain.len());
        for (i, (a, b)) in lines.iter().zip(&plain).enumerate() {
            assert_eq!(a["example"], b["example"]);
            assert_eq!(a["key"], format!("{}:{i}", path_str(&path)));
        }
    }
}

#[test]
fn cat_prints_other_records_as_base64() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.tfrecord");
    let mut w = feedstock::io::tfrecord::WriterBuilder::new()
        .create(&path)
        .unwrap();
    w.write_record(b"hi").unwrap();
    w.write_record(b"not a protobuf message!").unwrap();
    w.finish().unwrap();
    let out = feedstock(&["cat", path_str(&path)]);
    assert!(out.status.success());
    let lines = stdout_lines(&out);
    assert_eq!(lines[0]["bytes_base64"], b64("hi"));
    assert_eq!(lines[1]["bytes_base64"], b64("not a protobuf message!"));
}

/// The golden file cut inside its fourth record (index 3).
fn cut_copy(dir: &Path) -> (PathBuf, u64) {
    let bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    let offset: u64 = records_of("examples.tfrecord")[..3]
        .iter()
        .map(|r| 16 + r["length"].as_u64().unwrap())
        .sum();
    let path = dir.join("cut.tfrecord");
    std::fs::write(&path, &bytes[..offset as usize + 20]).unwrap();
    (path, offset)
}

fn one_line_error(out: &Output) -> String {
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn cat_stops_at_damage_with_one_line_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offset) = cut_copy(dir.path());
    let out = feedstock(&["cat", path_str(&path)]);
    let err = one_line_error(&out);
    assert!(err.contains("DataLoss"), "{err}");
    assert!(err.contains(&format!("file {}", path_str(&path))), "{err}");
    assert!(err.contains(&format!("offset {offset}")), "{err}");
    // The three whole records before the damage were printed.
    assert_eq!(stdout_lines(&out).len(), 3);
}

#[test]
fn count_prints_per_file_counts_and_a_total() {
    let plain = golden("examples.tfrecord");
    let seq = golden("sequence_examples.tfrecord");
    let out = feedstock(&["count", path_str(&plain), path_str(&seq)]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = format!(
        "8\t{}\n3\t{}\n11\ttotal\n",
        path_str(&plain),
        path_str(&seq)
    );
    assert_eq!(text, expected);
    let gz = golden("examples.gzip.tfrecord");
    let out = feedstock(&["count", "--compression", "gzip", path_str(&gz)]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("8\t{}\n8\ttotal\n", path_str(&gz))
    );
}

#[test]
fn count_fails_on_damage_with_one_line_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offset) = cut_copy(dir.path());
    let out = feedstock(&["count", path_str(&path)]);
    let err = one_line_error(&out);
    assert!(err.contains(&format!("file {}", path_str(&path))), "{err}");
    assert!(err.contains(&format!("offset {offset}")), "{err}");
    // A flipped data bit is caught too: count verifies every CRC.
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    bytes[30] ^= 0x01;
    let flipped = dir.path().join("flipped.tfrecord");
    std::fs::write(&flipped, bytes).unwrap();
    let err = one_line_error(&feedstock(&["count", path_str(&flipped)]));
    assert!(err.contains("data CRC mismatch"), "{err}");
    assert!(err.contains("offset 0"), "{err}");
}

#[test]
fn a_missing_file_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.tfrecord");
    for cmd in ["cat", "count"] {
        let err = one_line_error(&feedstock(&[cmd, path_str(&path)]));
        assert!(err.contains("NotFound"), "{err}");
        assert!(err.contains(path_str(&path)), "{err}");
    }
}

#[test]
fn an_unknown_compression_is_refused() {
    let out = feedstock(&["count", "--compression", "lz4", "x"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("lz4"), "{err}");
}

/// Every subcommand takes `file://` URLs where it takes paths, for inputs,
/// outputs and globs, and names the URL as given in what it prints.
#[test]
fn every_subcommand_takes_file_urls_and_names_them_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let root = format!("file://{}", dir.path().display());
    std::fs::write(dir.path().join("in.csv"), "a,b\n1,x\n2,y\n3,z\n").unwrap();
    let input = format!("{root}/in.csv");
    let out = format!("{root}/out.tfrecord");
    let convert = [
        "convert",
        "csv",
        &input,
        &out,
        "--header",
        "--columns",
        "a:int64,b:bytes",
    ];
    let run = feedstock(&convert);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(dir.path().join("out.tfrecord").is_file());
    // No temporary file is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);

    let ok = |args: &[&str]| {
        let run = feedstock(args);
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        String::from_utf8(run.stdout).unwrap()
    };
    assert_eq!(ok(&["count", &out]), format!("3\t{out}\n3\ttotal\n"));
    let pattern = format!("{root}/*.tfrecord");
    assert_eq!(ok(&["count", &pattern]), format!("3\t{out}\n3\ttotal\n"));
    let cat = feedstock(&["cat", &out]);
    let lines = stdout_lines(&cat);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["key"], format!("{out}:2"));
    assert!(ok(&["verify", &out]).contains("3 records ok"));
    assert!(ok(&["inspect", &out]).contains("3 records"));
    assert!(ok(&["index", &out]).contains("written"));
    assert!(dir.path().join(".out.tfrecord.feedstock-index").is_file());
    assert!(ok(&["bench", &out]).contains("read+parse+batch"));
    let repaired = format!("{root}/repaired.tfrecord");
    ok(&["repair", &out, &repaired]);
    assert_eq!(
        std::fs::read(dir.path().join("repaired.tfrecord")).unwrap(),
        std::fs::read(dir.path().join("out.tfrecord")).unwrap()
    );

    // Refusals and errors name the URL given.
    let again = feedstock(&convert);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    let err = String::from_utf8(again.stderr).unwrap();
    assert!(err.contains(&format!("(file {out})")), "{err}");
    let onto_input = feedstock(&["repair", &out, &out]);
    assert_eq!(onto_input.status.code(), Some(2), "{onto_input:?}");
    let missing = format!("{root}/missing.tfrecord");
    let run = feedstock(&["count", &missing]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(err.contains(&format!("(file {missing})")), "{err}");
}
