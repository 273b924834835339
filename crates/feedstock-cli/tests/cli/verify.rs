//! `feedstock verify`, run as the built binary on the golden files and on
//! damaged copies of them.

use std::path::Path;

use crate::support::{feedstock, golden, offsets, path_str, stdout};

#[test]
fn sound_files_pass_with_exit_zero_and_a_summary() {
    let plain = golden("examples.tfrecord");
    let gz = golden("examples.gzip.tfrecord");
    let out = feedstock(&["verify", "--compression", "gzip", path_str(&gz)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = feedstock(&["verify", path_str(&plain)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains(&format!("{}: 8 records ok", path_str(&plain))),
        "{text}"
    );
    assert!(text.contains("0 problems"), "{text}");
    assert!(
        text.ends_with("total: 1 file, 8 records ok, 0 problems in 0 files\n"),
        "{text}"
    );
}

#[test]
fn every_bad_data_crc_is_reported_with_file_key_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    let offs = offsets(&bytes);
    // Damage the data of records 2 and 5.
    bytes[offs[2] + 14] ^= 0x10;
    bytes[offs[5] + 12] ^= 0x01;
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, &bytes).unwrap();
    let good = golden("examples.tfrecord");

    let out = feedstock(&["verify", path_str(&bad), path_str(&good)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let name = path_str(&bad);
    for (i, off) in [(2, offs[2]), (5, offs[5])] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("key {name}:{i},")))
            .unwrap_or_else(|| panic!("no line for record {i}: {text}"));
        assert!(line.starts_with("DataLoss: corrupt record: data CRC"));
        assert!(line.contains(&format!("file {name}")), "{line}");
        assert!(line.contains(&format!("offset {off})")), "{line}");
        assert!(
            line.ends_with(&format!("resumed at offset {}", offs[i + 1])),
            "{line}"
        );
    }
    assert!(text.contains(&format!("{name}: 6 records ok")), "{text}");
    assert!(
        text.contains("total: 2 files, 14 records ok, 2 problems in 1 file"),
        "{text}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "feedstock: DataLoss: found 2 problems in 1 of 2 files\n"
    );
}

#[test]
fn a_truncated_file_is_skipped_to_its_end_and_later_files_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    let offs = offsets(&bytes);
    let cut = dir.path().join("cut.tfrecord");
    std::fs::write(&cut, &bytes[..offs[4] + 5]).unwrap();
    let good = golden("examples.tfrecord");
    let out = feedstock(&["verify", path_str(&cut), path_str(&good)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("truncated record"), "{text}");
    assert!(
        text.contains(&format!(
            "offset {}); skipped 5 bytes to the end of the file",
            offs[4]
        )),
        "{text}"
    );
    assert!(text.contains("4 records ok"), "{text}");
    assert!(
        text.contains("total: 2 files, 12 records ok, 1 problem in 1 file")
    );
}

#[test]
fn verify_resynchronises_after_a_bad_length_and_inserted_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    let offs = offsets(&bytes);
    // Record 1's length CRC is damaged; 50 bytes of garbage go before
    // record 5.
    bytes[offs[1] + 9] ^= 0x40;
    let at = offs[5];
    bytes.splice(at..at, [0x5au8; 50]);
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, &bytes).unwrap();
    let out = feedstock(&["verify", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let name = path_str(&bad);
    assert!(
        text.contains(&format!(
            "offset {}); skipped {} bytes, resumed at offset {}",
            offs[1],
            offs[2] - offs[1],
            offs[2]
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "offset {}); skipped 50 bytes, resumed at offset {}",
            offs[5],
            offs[5] + 50
        )),
        "{text}"
    );
    let skipped = offs[2] - offs[1] + 50;
    assert!(
        text.contains(&format!(
            "{name}: 7 records ok ({} bytes), 2 problems, {skipped} bytes \
             skipped",
            golden_data_bytes() - (offs[2] - offs[1] - 16) as u64
        )),
        "{text}"
    );
}

/// The data bytes of the golden file's records.
fn golden_data_bytes() -> u64 {
    let bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    bytes.len() as u64 - 16 * offsets(&bytes).len() as u64
}

#[test]
fn a_broken_gzip_stream_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(golden("examples.gzip.tfrecord")).unwrap();
    let cut = dir.path().join("cut.tfrecord.gz");
    std::fs::write(&cut, &bytes[..bytes.len() - 6]).unwrap();
    let out = feedstock(&["verify", path_str(&cut)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains("DataLoss"), "{out:?}");
}

#[test]
fn a_missing_file_is_exit_two_and_the_others_are_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("absent.tfrecord");
    let good = golden("examples.tfrecord");
    let out = feedstock(&["verify", path_str(&absent), path_str(&good)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("cannot open: NotFound"), "{text}");
    assert!(text.contains(": 8 records ok"), "{text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(path_str(&absent)), "{err}");
}

#[test]
fn help_documents_the_exit_status() {
    let out = feedstock(&["verify", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("Exit status: 0 when every file is sound, 1"));
    let out = feedstock(&["--help"]);
    let text = stdout(&out);
    for line in [
        "0  success",
        "1  the data is damaged",
        "2  usage or bad input",
    ] {
        assert!(text.contains(line), "{text}");
    }
    // A usage error is exit 2, as documented.
    assert_eq!(feedstock(&["verify"]).status.code(), Some(2));
}

#[test]
fn cat_and_count_use_the_same_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    bytes[20] ^= 1;
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, &bytes).unwrap();
    let absent = dir.path().join("absent.tfrecord");
    let good = golden("examples.tfrecord");
    for cmd in ["cat", "count", "verify"] {
        let code = |p: &Path| feedstock(&[cmd, path_str(p)]).status.code();
        assert_eq!(code(&good), Some(0), "{cmd}");
        assert_eq!(code(&bad), Some(1), "{cmd}");
        assert_eq!(code(&absent), Some(2), "{cmd}");
    }
}

#[test]
fn every_subcommand_help_documents_the_exit_status() {
    for sub in [
        "cat", "count", "verify", "inspect", "convert", "bench", "demo",
    ] {
        let out = feedstock(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{sub}");
        let text = stdout(&out);
        for line in ["Exit status:", "0  success", "1  the data is damaged"] {
            assert!(text.contains(line), "{sub} --help lacks {line:?}");
        }
    }
}
