//! `feedstock repair`, run as the built binary on damaged copies of the
//! golden files: every intact record is written, atomically, with a
//! report of the regions skipped.

use std::path::{Path, PathBuf};

use feedstock::io::tfrecord::ReaderBuilder;
use feedstock::io::Compression;

use crate::support::{feedstock, golden, offsets, path_str, stdout};

/// The records of a (strictly) sound file.
fn records(path: &Path, c: Compression) -> Vec<Vec<u8>> {
    let mut b = ReaderBuilder::new();
    b.compression(c);
    b.open(path)
        .unwrap()
        .map(|r| r.unwrap().value.to_vec())
        .collect()
}

#[test]
fn repair_writes_every_intact_record_and_reports_each_region() {
    let dir = tempfile::tempdir().unwrap();
    let golden_path = golden("examples.tfrecord");
    let originals = records(&golden_path, Compression::None);
    let mut bytes = std::fs::read(&golden_path).unwrap();
    let offs = offsets(&bytes);
    bytes[offs[2] + 14] ^= 0x10; // data of record 2
    bytes[offs[6] + 3] ^= 0x01; // length of record 6
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, &bytes).unwrap();
    let out_path = dir.path().join("fixed.tfrecord.gz");

    let out = feedstock(&["repair", path_str(&bad), path_str(&out_path)]);
    // Damage was found: status 1, and the output is written anyway.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    for i in [2, 6] {
        let want = format!(
            "offset {}); skipped {} bytes, resumed at offset {}",
            offs[i],
            offs[i + 1] - offs[i],
            offs[i + 1]
        );
        assert!(text.contains(&want), "{want} in {text}");
    }
    assert!(
        text.contains(&format!("{}: 6 records kept", path_str(&out_path))),
        "{text}"
    );
    assert!(text.contains("2 regions skipped"), "{text}");
    // The output is gzip (from its extension) and holds exactly the
    // intact records, in order.
    let kept = records(&out_path, Compression::Gzip);
    let want: Vec<_> = originals
        .iter()
        .enumerate()
        .filter(|(i, _)| ![2, 6].contains(i))
        .map(|(_, r)| r.clone())
        .collect();
    assert_eq!(kept, want);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("is damaged: skipped 2 regions"), "{err}");
}

#[test]
fn a_sound_input_is_copied_with_status_zero() {
    let dir = tempfile::tempdir().unwrap();
    let gz = golden("examples.gzip.tfrecord");
    let out_path = dir.path().join("copy.tfrecord");
    let out = feedstock(&[
        "repair",
        "--input-compression",
        "gzip",
        path_str(&gz),
        path_str(&out_path),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("8 records kept"), "{out:?}");
    assert!(stdout(&out).contains("0 regions skipped"), "{out:?}");
    assert_eq!(
        records(&out_path, Compression::None),
        records(&gz, Compression::Gzip)
    );
}

#[test]
fn a_broken_gzip_input_keeps_the_records_before_the_break() {
    let dir = tempfile::tempdir().unwrap();
    let gz = golden("examples.gzip.tfrecord");
    let bytes = std::fs::read(&gz).unwrap();
    let cut = dir.path().join("cut.tfrecord.gz");
    std::fs::write(&cut, &bytes[..bytes.len() - 6]).unwrap();
    let out_path = dir.path().join("fixed.tfrecord");
    let out = feedstock(&["repair", path_str(&cut), path_str(&out_path)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("the rest of the file cannot be read"),
        "{text}"
    );
    // The trailer was cut: every record is before the break.
    assert_eq!(records(&out_path, Compression::None).len(), 8);
}

#[test]
fn repair_refuses_its_input_as_output_and_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tfrecord");
    std::fs::copy(golden("examples.tfrecord"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = feedstock(&["repair", path_str(&input), path_str(&input)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read(&input).unwrap(), before);

    let existing = dir.path().join("out.tfrecord");
    std::fs::write(&existing, b"keep me").unwrap();
    let out = feedstock(&["repair", path_str(&input), path_str(&existing)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");
    let out = feedstock(&[
        "repair",
        "--force",
        path_str(&input),
        path_str(&existing),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read(&existing).unwrap(), before);
}

#[test]
fn a_missing_input_is_status_two_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.tfrecord");
    let out = feedstock(&[
        "repair",
        path_str(&dir.path().join("absent.tfrecord")),
        path_str(&out_path),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!out_path.exists());
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 0, "no temporary file is left behind");
}

#[test]
fn help_documents_the_exit_status() {
    let out = feedstock(&["repair", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("Exit status"), "{text}");
    assert!(text.contains("--force"), "{text}");
}

/// A file of records "zero", P, "two", "three" whose record P holds the
/// whole frames of `inner` followed by bytes that are not a frame, with
/// P's length damaged: its path, and the offsets of the clean records.
fn nested(dir: &Path, inner: &[&[u8]]) -> (PathBuf, Vec<usize>) {
    use feedstock::io::tfrecord::encode_record;
    let mut payload = Vec::new();
    for r in inner {
        encode_record(r, &mut payload);
    }
    payload.extend_from_slice(b"not a frame");
    let mut bytes = Vec::new();
    for r in [&b"zero"[..], &payload, b"two", b"three"] {
        encode_record(r, &mut bytes);
    }
    let offs = offsets(&bytes);
    bytes[offs[1] + 2] ^= 0x04;
    let path = dir.join("nested.tfrecord");
    std::fs::write(&path, &bytes).unwrap();
    (path, offs)
}

#[test]
fn repair_does_not_make_a_record_of_a_frame_inside_a_damaged_payload() {
    let dir = tempfile::tempdir().unwrap();
    let (bad, offs) = nested(dir.path(), &[b"an inner record"]);
    let out_path = dir.path().join("fixed.tfrecord");
    let out = feedstock(&["repair", path_str(&bad), path_str(&out_path)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let want = format!(
        "skipped {} bytes, resumed at offset {}",
        offs[2] - offs[1],
        offs[2]
    );
    assert!(text.contains(&want), "{want} in {text}");
    assert!(text.contains("3 records kept"), "{text}");
    assert_eq!(
        records(&out_path, Compression::None),
        [&b"zero"[..], b"two", b"three"]
    );
    // `verify` walks the same way.
    let out = feedstock(&["verify", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains(&want), "{out:?}");
}

#[test]
fn with_the_index_repair_passes_over_several_nested_frames() {
    let dir = tempfile::tempdir().unwrap();
    let inner: [&[u8]; 2] = [b"inner one", b"inner two"];
    let (bad, offs) = nested(dir.path(), &inner);
    // The index of the file before the damage.
    let mut clean = std::fs::read(&bad).unwrap();
    clean[offs[1] + 2] ^= 0x04;
    std::fs::write(&bad, &clean).unwrap();
    let out = feedstock(&["index", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    clean[offs[1] + 2] ^= 0x04;
    std::fs::write(&bad, &clean).unwrap();

    // Without the index, two frames in a row inside the payload pass
    // for records (docs/corrupt-records.md says so).
    let out_path = dir.path().join("fixed.tfrecord");
    let out = feedstock(&["repair", path_str(&bad), path_str(&out_path)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        records(&out_path, Compression::None),
        [&b"zero"[..], inner[0], inner[1], b"two", b"three"]
    );
    // With it, repair is exact.
    let out = feedstock(&[
        "repair",
        "--index",
        "--force",
        path_str(&bad),
        path_str(&out_path),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let want = format!(
        "skipped {} bytes, resumed at offset {}",
        offs[2] - offs[1],
        offs[2]
    );
    assert!(text.contains(&want), "{want} in {text}");
    assert_eq!(
        records(&out_path, Compression::None),
        [&b"zero"[..], b"two", b"three"]
    );
    // An index of a file of another size is refused: OUT stays as it was.
    let before = std::fs::read(&out_path).unwrap();
    let mut longer = clean.clone();
    longer.extend_from_slice(b"x");
    std::fs::write(&bad, &longer).unwrap();
    let out = feedstock(&[
        "repair",
        "--index",
        "--force",
        path_str(&bad),
        path_str(&out_path),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("stale"), "{err}");
    assert_eq!(std::fs::read(&out_path).unwrap(), before);
}
