//! Helpers shared by the reader tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use feedstock::reader::{Reader, Record, WorkQueue};
use feedstock::{Error, Result};

/// A closed filename queue holding a fixed list: the stand-in for a
/// filename queue whose producer has finished.
pub struct Files(Mutex<VecDeque<String>>);

impl Files {
    pub fn new<S: Into<String>>(files: impl IntoIterator<Item = S>) -> Files {
        Files(Mutex::new(files.into_iter().map(Into::into).collect()))
    }

    pub fn remaining(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

impl WorkQueue for Files {
    fn next_work(&self) -> Result<String> {
        let next = self.0.lock().unwrap().pop_front();
        next.ok_or_else(|| Error::out_of_range("filename queue is closed"))
    }
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The path of a golden file.
pub fn golden(name: &str) -> String {
    format!("{}/tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The parsed JSON sidecar of a golden file.
pub fn sidecar(name: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(golden(&format!("{name}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Reads until the end of input, which must be a clean OutOfRange.
pub fn read_all(reader: &Reader, work: &dyn WorkQueue) -> Vec<Record> {
    let mut out = Vec::new();
    loop {
        match reader.read(work) {
            Ok(r) => out.push(r),
            Err(e) if e.is_out_of_range() => return out,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
}

/// The (key, value-as-text) pairs of `records`.
pub fn pairs(records: &[Record]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                String::from_utf8_lossy(&r.value).into_owned(),
            )
        })
        .collect()
}

/// Checks that saving a reader's state after any number of records and
/// restoring it into a fresh reader (fed the files the first had not yet
/// taken) reads exactly the records that were left: none repeated, none
/// skipped, counters carried over.
pub fn restore_is_exact(make: impl Fn() -> Reader, files: Vec<String>) {
    let raw = |records: &[Record]| -> Vec<(String, Vec<u8>)> {
        records
            .iter()
            .map(|r| (r.key.clone(), r.value.to_vec()))
            .collect()
    };
    let full = raw(&read_all(&make(), &Files::new(files.clone())));
    assert!(full.len() > 2);
    for k in 0..=full.len() {
        // Read k records, save, and resume in a fresh reader.
        let first = make();
        let queue = Files::new(files.clone());
        let mut got = Vec::new();
        for _ in 0..k {
            got.push(first.read(&queue).unwrap());
        }
        let state = first.serialize_state().unwrap();
        let rest: Vec<String> =
            std::iter::from_fn(|| queue.next_work().ok()).collect();
        let second = make();
        second.restore_state(&state).unwrap();
        assert_eq!(second.num_records_produced(), k as u64);
        assert_eq!(
            second.num_work_units_completed(),
            first.num_work_units_completed()
        );
        got.extend(read_all(&second, &Files::new(rest)));
        assert!(raw(&got) == full, "resuming after {k} records");
    }
}
