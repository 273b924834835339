//! The CLI over a real S3 server (SeaweedFS on 127.0.0.1, started by the
//! test): convert writes shards to a bucket whole or not at all, and
//! count, cat and verify read them back through URLs and globs.

#[path = "../../feedstock/tests/seaweed_support/mod.rs"]
mod seaweed_support;

use std::process::{Command, Output};

use feedstock::io::fs::FileSystem;
use feedstock::io::store::ObjectStoreFs;
use feedstock::Kind;
use seaweed_support::{shared, BUCKET, SECRET_KEY};

fn feedstock(args: &[&str]) -> Output {
    let server = shared();
    Command::new(env!("CARGO_BIN_EXE_feedstock"))
        .args(args)
        .envs(server.env())
        .output()
        .expect("run feedstock")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn convert_writes_shards_to_a_bucket_and_count_cat_verify_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    let lines: String = (0..10).map(|i| format!("{i},x{i}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let out = format!("s3://{BUCKET}/cli/data.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        input.to_str().unwrap(),
        &out,
        "--shards",
        "2",
        "--columns",
        "i:int64,s:bytes",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");

    let pattern = format!("s3://{BUCKET}/cli/data-*-of-00002.tfrecord");
    let run = feedstock(&["count", &pattern]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(
        text(&run.stdout),
        format!(
            "5\ts3://{BUCKET}/cli/data-00000-of-00002.tfrecord\n\
             5\ts3://{BUCKET}/cli/data-00001-of-00002.tfrecord\n10\ttotal\n"
        )
    );

    let run = feedstock(&[
        "cat",
        &format!("s3://{BUCKET}/cli/data-00001-of-00002.tfrecord"),
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let cat = text(&run.stdout);
    assert_eq!(cat.lines().count(), 5);
    assert!(cat.contains("\"x1\"") || cat.contains("eDE"), "{cat}");

    let run = feedstock(&["verify", &pattern]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");

    // No credential in anything printed, even on failure.
    let run = feedstock(&[
        "count",
        &format!("s3://{BUCKET}/cli/nothing-*.tfrecord"),
    ]);
    assert_ne!(run.status.code(), Some(0));
    let all = text(&run.stdout) + &text(&run.stderr);
    assert!(all.contains("nothing-*"), "{all}");
    assert!(!all.contains(SECRET_KEY), "{all}");
}

#[test]
fn a_failed_convert_leaves_no_object_in_the_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.csv");
    std::fs::write(&input, "1,a\n2,b\nnot-a-number,c\n").unwrap();
    let out = format!("s3://{BUCKET}/cli-failed/data.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        input.to_str().unwrap(),
        &out,
        "--shards",
        "2",
        "--columns",
        "i:int64,s:bytes",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let store = ObjectStoreFs::with_options(shared().options()).unwrap();
    let e = store
        .glob(&format!("s3://{BUCKET}/cli-failed/*"))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
}

#[test]
fn bench_over_urls_prints_the_store_counters() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    let lines: String = (0..20).map(|i| format!("{i},x{i}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let out = format!("s3://{BUCKET}/cli-bench/data.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        input.to_str().unwrap(),
        &out,
        "--columns",
        "i:int64,s:bytes",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let run = feedstock(&["bench", &out, "--threads", "1"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let stdout = text(&run.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("object store: "))
        .unwrap_or_else(|| panic!("no store counters in:\n{stdout}"));
    // "object store: R requests, B bytes, T retries, F failures"
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let size = ObjectStoreFs::with_options(shared().options())
        .unwrap()
        .size(&out)
        .unwrap();
    let [requests, bytes, retries, failures] = numbers[..] else {
        panic!("{line}");
    };
    // Three stages read the object, plus the spec inference: at least a
    // request and the object's bytes for each stage.
    assert!(requests >= 3, "{line}");
    assert!(bytes >= 3 * size, "{line} (object of {size} bytes)");
    assert_eq!((retries, failures), (0, 0), "{line}");

    // Local files print no store line.
    let local = dir.path().join("local.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        input.to_str().unwrap(),
        local.to_str().unwrap(),
        "--columns",
        "i:int64,s:bytes",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let run = feedstock(&["bench", local.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(!text(&run.stdout).contains("object store"), "{run:?}");
}
