//! The CLI over a real S3 server (SeaweedFS on 127.0.0.1, started by the
//! test): convert writes shards to a bucket whole or not at all, and
//! count, cat and verify read them back through URLs and globs.

use std::process::{Command, Output};

use crate::seaweed_support::{shared, BUCKET, SECRET_KEY};
use feedstock::io::fs::FileSystem;
use feedstock::io::store::ObjectStoreFs;
use feedstock::Kind;

use crate::support::bin;

/// The command with none of this process's `AWS_*` variables: a child
/// sees only the endpoint, region and credentials a test gives it, never
/// a default credential chain or another endpoint (`AWS_ENDPOINT_URL_S3`
/// would win over `AWS_ENDPOINT`).
fn bare(args: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.args(args);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn feedstock(args: &[&str]) -> Output {
    let server = shared();
    bare(args)
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

/// `cat` of an object overwritten while it is read (issue 33, item 3):
/// the command fails naming the object, once, and every line it printed
/// is a record of the old object, under its own key.
#[test]
fn cat_of_an_object_overwritten_mid_read_fails_naming_it() {
    use base64::Engine as _;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;

    let server = shared();
    let store = ObjectStoreFs::with_options(server.options()).unwrap();
    let records = |tag: &str| -> Vec<Vec<u8>> {
        (0..4000)
            .map(|i| format!("{tag}-{i:05}-{}", "x".repeat(500)).into_bytes())
            .collect()
    };
    let tfrecords = |recs: &[Vec<u8>]| {
        let mut w = feedstock::io::tfrecord::WriterBuilder::new()
            .from_writer(Vec::new());
        for r in recs {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap()
    };
    let put = |url: &str, bytes: &[u8]| {
        let mut w = store.create(url).unwrap();
        w.write_all(bytes).unwrap();
        w.commit().unwrap();
    };
    let (old, new) = (records("old"), records("new"));
    let url = format!("s3://{BUCKET}/cli-changed/data.tfrecord");
    put(&url, &tfrecords(&old));

    // Small requests, so that most of the object is still to be asked for
    // when it changes; `cat` stops on the full pipe meanwhile.
    let mut child = bare(&["cat", "--raw", &url])
        .envs(server.env())
        .env("FEEDSTOCK_STORE_CHUNK_SIZE", "4096")
        .env("FEEDSTOCK_STORE_READ_AHEAD", "4096")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run feedstock");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    lines.push(first);
    put(&url, &tfrecords(&new));
    for line in out.lines() {
        lines.push(line.unwrap());
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(lines.len() < old.len(), "every record printed: {err}");
    for (i, line) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["key"], format!("{url}:{i}"));
        let data = base64::engine::general_purpose::STANDARD
            .decode(v["bytes_base64"].as_str().unwrap())
            .unwrap();
        assert!(data == old[i], "line {i} is not the old object's record");
    }
    assert!(
        err.contains("the object changed while it was being read (ETag "),
        "{err}"
    );
    assert_eq!(err.matches(url.as_str()).count(), 1, "{err}");
    assert_eq!(err.matches("FailedPrecondition").count(), 1, "{err}");
}

/// A bucket with no credentials configured (issue 33, item 9): the
/// command fails at once saying which variables give them, and never
/// asks the instance-metadata service (169.254.169.254) for any. The one
/// test that sets no credentials; its endpoint is the local server.
#[test]
fn a_bucket_without_credentials_says_which_variables_give_them() {
    let server = shared();
    let url = format!("s3://{BUCKET}/cli/any.tfrecord");
    let run = bare(&["count", &url])
        .env("AWS_ENDPOINT", server.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("run feedstock");
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    for name in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "aws_access_key_id",
        "AWS_METADATA_ENDPOINT",
    ] {
        assert!(err.contains(name), "{name} not named: {err}");
    }
    assert!(err.contains("PermissionDenied"), "{err}");
    assert!(err.contains(&url), "{err}");
    assert!(!err.contains("169.254.169.254/latest"), "{err}");
    assert!(!err.contains("Unknown"), "{err}");

    // Half a key pair names the missing half.
    let run = bare(&["count", &url])
        .env("AWS_ENDPOINT", server.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", crate::seaweed_support::ACCESS_KEY)
        .output()
        .expect("run feedstock");
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("AWS_SECRET_ACCESS_KEY"), "{err}");
    assert!(!err.contains("Generic"), "{err}");
}

/// `AWS_ALLOW_HTTP` (issue 33, item 9): an `http://` endpoint it does not
/// allow names the variable and the endpoint, and a value that is not a
/// boolean names the variable and the values it takes.
#[test]
fn aws_allow_http_messages_name_the_variable() {
    let server = shared();
    let url = format!("s3://{BUCKET}/cli/any.tfrecord");
    let run = bare(&["count", &url])
        .envs(server.env())
        .env("AWS_ALLOW_HTTP", "false")
        .output()
        .expect("run feedstock");
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("AWS_ALLOW_HTTP=true"), "{err}");
    assert!(err.contains(&server.endpoint()), "{err}");
    assert!(!err.contains("builder error"), "{err}");

    let run = bare(&["count", &url])
        .envs(server.env())
        .env("AWS_ALLOW_HTTP", "maybe")
        .output()
        .expect("run feedstock");
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("AWS_ALLOW_HTTP"), "{err}");
    assert!(err.contains("\"maybe\""), "{err}");
    assert!(err.contains("true or false"), "{err}");
    assert!(!err.contains("Generic"), "{err}");
}
