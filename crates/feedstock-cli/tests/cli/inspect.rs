//! `feedstock inspect`, run as the built binary on the golden files that
//! TensorFlow wrote, whose sidecars say what every record holds.

use serde_json::Value;

use crate::support::{feedstock, golden, path_str, sidecar};

fn sidecar_records(name: &str) -> Vec<Value> {
    sidecar(name)["records"].as_array().unwrap().clone()
}

fn inspect_json(args: &[&str]) -> Value {
    let mut all = vec!["inspect", "--json"];
    all.extend_from_slice(args);
    let out = feedstock(&all);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// Least and most values of `feature` over the sidecar's records.
fn value_range(records: &[Value], part: &str, feature: &str) -> (u64, u64) {
    let counts: Vec<u64> = records
        .iter()
        .map(|r| r[part][feature]["values"].as_array().unwrap().len() as u64)
        .collect();
    (*counts.iter().min().unwrap(), *counts.iter().max().unwrap())
}

#[test]
fn the_example_schema_matches_what_the_sidecar_says() {
    let records = sidecar_records("examples.tfrecord");
    let path = golden("examples.tfrecord");
    let s = inspect_json(&[path_str(&path)]);
    assert_eq!(s["records"], 8);
    assert_eq!(s["examples"], 8);
    assert_eq!(s["files"][0]["records"], 8);
    let lens: Vec<u64> = records
        .iter()
        .map(|r| r["length"].as_u64().unwrap())
        .collect();
    let bytes = &s["record_bytes"];
    assert_eq!(bytes["min"], *lens.iter().min().unwrap());
    assert_eq!(bytes["max"], *lens.iter().max().unwrap());
    let mean = lens.iter().sum::<u64>() as f64 / lens.len() as f64;
    assert!((bytes["mean"].as_f64().unwrap() - mean).abs() < 1e-9);

    let features = s["features"].as_object().unwrap();
    let names: Vec<&String> = features.keys().collect();
    let mut expected: Vec<&String> =
        records[0]["example"].as_object().unwrap().keys().collect();
    expected.sort();
    assert_eq!(names, expected);
    for (name, f) in features {
        let (lo, hi) = value_range(&records, "example", name);
        assert_eq!(f["values"]["min"], lo, "{name}");
        assert_eq!(f["values"]["max"], hi, "{name}");
        assert_eq!(f["records"], 8, "{name}");
        let kind = records[0]["example"][name]["kind"].as_str().unwrap();
        assert_eq!(f["kind"], kind.trim_end_matches("_list"), "{name}");
        let fixed = f["suggested"].as_str().unwrap().starts_with("FixedLen");
        assert_eq!(fixed, lo == hi, "{name}: {f}");
    }
    assert_eq!(features["rating"]["suggested"], "FixedLen([2], float32)");
    assert_eq!(features["keywords"]["suggested"], "VarLen(string)");
}

#[test]
fn sequence_examples_show_context_and_feature_lists() {
    let path = golden("sequence_examples.tfrecord");
    let s = inspect_json(&[path_str(&path)]);
    assert_eq!(s["sequence_examples"], 3);
    assert_eq!(s["examples"], 0);
    assert_eq!(s["context"]["seq_id"]["suggested"], "FixedLen([], int64)");
    let tokens = &s["feature_lists"]["tokens"];
    assert_eq!(tokens["steps"]["min"], 2);
    assert_eq!(tokens["steps"]["max"], 4);
    assert_eq!(tokens["values_per_step"]["max"], 3);
    assert_eq!(tokens["suggested"], "VarLen(int64)");
    assert_eq!(
        s["feature_lists"]["scores"]["suggested"],
        "FixedLenSequence([], float32)"
    );
    // --sequence reads plain Examples as SequenceExamples (no lists).
    let ex = golden("examples.tfrecord");
    let s = inspect_json(&["--sequence", path_str(&ex)]);
    assert_eq!(s["sequence_examples"], 8);
    assert_eq!(s["context"]["user_id"]["records"], 8);
}

#[test]
fn the_table_names_every_feature_and_the_counts() {
    let path = golden("examples.gzip.tfrecord");
    let out =
        feedstock(&["inspect", "--compression", "gzip", path_str(&path)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&format!("8\t{}\n", path_str(&path))));
    assert!(text.contains("8 records: 8 Example, 0 SequenceExample"));
    let rating = text.lines().find(|l| l.contains("rating")).unwrap();
    assert!(rating.contains("float"), "{rating}");
    assert!(rating.contains("2..2"), "{rating}");
    assert!(rating.ends_with("FixedLen([2], float32)"), "{rating}");
}

#[test]
fn records_that_are_not_examples_are_counted_as_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.tfrecord");
    let mut bytes = Vec::new();
    for line in ["hello", "world"] {
        feedstock::io::tfrecord::encode_record(line.as_bytes(), &mut bytes);
    }
    std::fs::write(&path, bytes).unwrap();
    let s = inspect_json(&[path_str(&path)]);
    assert_eq!(s["other"], 2);
    assert!(s["features"].as_object().unwrap().is_empty());
}

#[test]
fn damaged_and_missing_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    bytes[40] ^= 4;
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, bytes).unwrap();
    let out = feedstock(&["inspect", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("DataLoss"), "{err}");
    assert!(err.contains(&format!("file {}", path_str(&bad))), "{err}");

    let absent = dir.path().join("absent.tfrecord");
    let out = feedstock(&["inspect", path_str(&absent)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(path_str(&absent)), "{err}");
}
