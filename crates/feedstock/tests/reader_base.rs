//! The shared Reader: work from the queue, keys, counters, read_up_to,
//! reset, serialize/restore, and errors naming the file — as TensorFlow's
//! ReaderBase, plus the stricter behaviour where TF loses data.

mod reader_support;

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use feedstock::io::fs::{FileSystem, LocalFs};
use feedstock::reader::{
    FixedLengthRecordReader, IdentityReader, RawRecord, Reader, RecordKey,
    RecordReader, TextLineReader, WholeFileReader,
};
use feedstock::{Error, Kind, Result};
use reader_support::{pairs, read_all, restore_is_exact, write, Files};

fn text() -> Reader {
    Reader::new(TextLineReader::new())
}

#[test]
fn keys_and_counters_follow_files_from_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"a1\na2\n");
    let b = write(dir.path(), "b.txt", b"b1\n");
    let r = text();
    let files = Files::new([a.clone(), b.clone()]);
    assert_eq!(r.read(&files).unwrap().key, format!("{a}:1"));
    assert_eq!(r.current_work(), Some(a.clone()));
    assert_eq!(r.read(&files).unwrap().key, format!("{a}:2"));
    // a is finished only when the reader finds its end.
    assert_eq!(r.num_work_units_completed(), 0);
    assert_eq!(r.read(&files).unwrap().key, format!("{b}:1"));
    assert_eq!(r.num_work_units_completed(), 1);
    assert_eq!(r.num_records_produced(), 3);
    let e = r.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::OutOfRange);
    assert_eq!(r.num_work_units_completed(), 2);
    assert_eq!(r.current_work(), None);
}

#[test]
fn whole_file_reader_keys_by_filename_and_completes_each_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.bin", b"\x00\x01binary");
    let e = write(dir.path(), "empty.bin", b"");
    let r = Reader::new(WholeFileReader::new());
    let files = Files::new([a.clone(), e.clone()]);
    let rec = r.read(&files).unwrap();
    assert_eq!(
        (rec.key.as_str(), &rec.value[..]),
        (&*a, &b"\x00\x01binary"[..])
    );
    assert_eq!(r.num_work_units_completed(), 1);
    let rec = r.read(&files).unwrap();
    assert_eq!((rec.key.as_str(), rec.value.len()), (&*e, 0));
    assert_eq!(r.num_work_units_completed(), 2);
    assert!(r.read(&files).unwrap_err().is_out_of_range());
}

#[test]
fn identity_reader_returns_the_work_as_key_and_value() {
    let r = Reader::new(IdentityReader::new());
    let files = Files::new(["w1", "w2"]);
    let got = pairs(&read_all(&r, &files));
    assert_eq!(
        got,
        [("w1".into(), "w1".into()), ("w2".into(), "w2".into())]
    );
    assert_eq!(r.num_records_produced(), 2);
    assert_eq!(r.num_work_units_completed(), 2);
}

#[test]
fn read_up_to_stops_at_the_end_of_a_file_and_never_returns_empty() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"1\n2\n3\n4\n5\n");
    let empty = write(dir.path(), "e.txt", b"");
    let b = write(dir.path(), "b.txt", b"6\n");
    let r =
        Reader::new(TextLineReader::builder().allow_empty_files(true).build());
    let files = Files::new([a, empty, b]);
    let sizes = |v: Vec<feedstock::reader::Record>| {
        v.iter()
            .map(|r| String::from_utf8(r.value.to_vec()).unwrap())
            .collect::<Vec<_>>()
    };
    assert!(r.read_up_to(&files, 0).unwrap().is_empty());
    assert_eq!(sizes(r.read_up_to(&files, 2).unwrap()), ["1", "2"]);
    assert_eq!(sizes(r.read_up_to(&files, 10).unwrap()), ["3", "4", "5"]);
    assert_eq!(sizes(r.read_up_to(&files, 10).unwrap()), ["6"]);
    assert!(r.read_up_to(&files, 10).unwrap_err().is_out_of_range());
    assert_eq!(r.num_records_produced(), 6);
    assert_eq!(r.num_work_units_completed(), 3);
}

#[test]
fn read_up_to_returns_records_before_an_error_and_the_error_next() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.bin", b"aabbc");
    let r = Reader::new(FixedLengthRecordReader::builder(2).build().unwrap());
    let files = Files::new([a.clone()]);
    let got = r.read_up_to(&files, 10).unwrap();
    assert_eq!(got.len(), 2);
    let e = r.read_up_to(&files, 10).unwrap_err();
    assert_eq!((e.kind(), e.file()), (Kind::DataLoss, Some(&*a)));
    assert!(r.read_up_to(&files, 10).unwrap_err().is_out_of_range());
}

#[test]
fn reset_zeroes_the_counters_and_drops_the_current_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"a1\na2\n");
    let b = write(dir.path(), "b.txt", b"b1\n");
    let r = text();
    let files = Files::new([a, b.clone()]);
    r.read(&files).unwrap();
    r.reset().unwrap();
    assert_eq!(r.num_records_produced(), 0);
    assert_eq!(r.num_work_units_completed(), 0);
    assert_eq!(r.current_work(), None);
    // The next read takes a new file from the queue.
    assert_eq!(r.read(&files).unwrap().key, format!("{b}:1"));
}

#[test]
fn missing_file_is_not_found_naming_it_and_the_next_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.txt").to_str().unwrap().to_owned();
    let ok = write(dir.path(), "ok.txt", b"x\n");
    let r = text();
    let files = Files::new([missing.clone(), ok.clone()]);
    let e = r.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert_eq!(e.file(), Some(missing.as_str()));
    assert!(e.to_string().contains(&missing));
    assert_eq!(r.read(&files).unwrap().key, format!("{ok}:1"));
}

#[test]
fn a_directory_given_as_a_file_is_failed_precondition_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_owned();
    for r in [text(), Reader::new(WholeFileReader::new())] {
        let e = r.read(&Files::new([d.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
        assert_eq!(e.file(), Some(d.as_str()));
        assert!(e.message().contains("is a directory"), "{e}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    // Reading /proc/self/mem at offset 0 fails with EIO, even for root: a
    // file that opens but cannot be read.
    let path = "/proc/self/mem";
    let e = text().read(&Files::new([path])).unwrap_err();
    assert_ne!(e.kind(), Kind::OutOfRange);
    assert_eq!(e.file(), Some(path));
}

/// Where the permission test's unprivileged run finds its file.
#[cfg(unix)]
const UNREADABLE: &str = "FEEDSTOCK_TEST_UNREADABLE_FILE";

#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_permission_denied_naming_it() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    if let Ok(f) = std::env::var(UNREADABLE) {
        // The run as `nobody` below.
        let e = text().read(&Files::new([f.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::PermissionDenied, "{e}");
        assert_eq!(e.file(), Some(f.as_str()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Others may enter the directory; only the file is unreadable.
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755))
        .unwrap();
    let f = write(dir.path(), "secret.txt", b"x\n");
    std::fs::set_permissions(&f, PermissionsExt::from_mode(0o000)).unwrap();
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() != 0) {
        let e = text().read(&Files::new([f.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::PermissionDenied, "{e}");
        assert_eq!(e.file(), Some(f.as_str()));
        return;
    }
    // Root reads any file: this test runs again as the user `nobody`
    // (uid and gid 65534), in this same test binary.
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "a_file_without_read_permission_is_permission_denied_naming_it",
            "--exact",
            "--test-threads=1",
        ])
        .env(UNREADABLE, &f)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && out.contains("1 passed"),
        "the run as nobody: {run:?}"
    );
}

/// An in-memory filesystem whose files can fail after some bytes.
#[derive(Debug, Default)]
struct MemFs {
    files: BTreeMap<String, Vec<u8>>,
    fail_after: Option<usize>,
}

struct FailingRead {
    data: std::io::Cursor<Vec<u8>>,
    left: usize,
}

impl Read for FailingRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.left);
        let n = self.data.read(&mut buf[..n])?;
        self.left -= n;
        Ok(n)
    }
}

impl FileSystem for MemFs {
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        let data =
            self.files.get(path).cloned().ok_or_else(|| {
                Error::not_found("no such file").with_file(path)
            })?;
        Ok(match self.fail_after {
            Some(left) => Box::new(FailingRead {
                data: std::io::Cursor::new(data),
                left,
            }),
            None => Box::new(std::io::Cursor::new(data)),
        })
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.open(path).map(|_| self.files[path].len() as u64)
    }

    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        Err(Error::unimplemented("glob").with_file(pattern))
    }
}

#[test]
fn readers_open_files_only_through_the_filesystem_trait() {
    let mut fs = MemFs::default();
    fs.files.insert("mem://a".into(), b"x\ny\n".to_vec());
    let r = Reader::with_fs(TextLineReader::new(), Arc::new(fs));
    let got = pairs(&read_all(&r, &Files::new(["mem://a"])));
    assert_eq!(
        got,
        [
            ("mem://a:1".into(), "x".into()),
            ("mem://a:2".into(), "y".into())
        ]
    );
}

#[test]
fn a_read_error_names_the_file_and_abandons_it_for_the_next() {
    let mut fs = MemFs {
        fail_after: Some(4),
        ..MemFs::default()
    };
    fs.files.insert("bad".into(), b"ab\ncd\nef\n".to_vec());
    let r = Reader::with_fs(TextLineReader::new(), Arc::new(fs));
    let files = Files::new(["bad", "bad"]);
    // The 4 readable bytes hold one whole line, which is delivered.
    assert_eq!(&r.read(&files).unwrap().value[..], b"ab");
    let e = r.read(&files).unwrap_err();
    assert_eq!(e.file(), Some("bad"));
    assert!(e.message().contains("disk on fire"), "{e}");
    assert_eq!(r.num_work_units_completed(), 1);
    assert_eq!(files.remaining(), 1);
    // The next call moves on instead of failing on the same bytes forever.
    assert_eq!(r.read(&files).unwrap().key, "bad:1");
    let e = r.read(&files).unwrap_err();
    assert_eq!(files.remaining(), 0);
    assert_eq!(e.file(), Some("bad"));
}

#[test]
fn restored_text_reader_resumes_at_the_next_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.csv", b"h\n1\n2\r\n3");
    let b = write(dir.path(), "b.csv", b"h\n4\n");
    restore_is_exact(
        || Reader::new(TextLineReader::builder().skip_header_lines(1).build()),
        vec![a, b],
    );
}

#[test]
fn restored_fixed_length_reader_resumes_at_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.bin", b"Haa.bb.cc.F");
    let b = write(dir.path(), "b.bin", b"Hdd.F");
    restore_is_exact(
        || {
            Reader::new(
                FixedLengthRecordReader::builder(2)
                    .header_bytes(1)
                    .footer_bytes(1)
                    .hop_bytes(3)
                    .build()
                    .unwrap(),
            )
        },
        vec![a, b],
    );
}

#[test]
fn restored_whole_file_and_identity_readers_resume_at_the_next_file() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| {
            write(dir.path(), &format!("{i}"), format!("f{i}").as_bytes())
        })
        .collect();
    restore_is_exact(|| Reader::new(WholeFileReader::new()), files.clone());
    restore_is_exact(|| Reader::new(IdentityReader::new()), files);
}

#[test]
fn restore_rejects_foreign_or_inconsistent_state_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"1\n2\n");
    let r = text();
    r.read(&Files::new([a.clone()])).unwrap();
    let text_state = r.serialize_state().unwrap();

    let e = r.restore_state(b"\x08\x01garbage").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(r.num_records_produced(), 0, "a failed restore resets");

    let fixed =
        Reader::new(FixedLengthRecordReader::builder(2).build().unwrap());
    let e = fixed.restore_state(&text_state).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.file(), Some(a.as_str()));

    // A state whose file has gone away cannot be restored.
    std::fs::remove_file(&a).unwrap();
    let e = text().restore_state(&text_state).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
}

/// A reader with no resumable position inside a file.
#[derive(Default)]
struct OneShot {
    left: Vec<u8>,
}

impl RecordReader for OneShot {
    fn on_work_started(
        &mut self,
        file: &str,
        _: &dyn FileSystem,
    ) -> Result<()> {
        self.left = file.as_bytes().to_vec();
        Ok(())
    }
    fn read(&mut self) -> Result<Option<RawRecord>> {
        Ok(self.left.pop().map(|b| {
            RawRecord::new(RecordKey::Suffix(format!("byte{b}")), vec![b])
        }))
    }
    fn on_work_finished(&mut self) -> Result<()> {
        Ok(())
    }
    fn reset(&mut self) -> Result<()> {
        self.left.clear();
        Ok(())
    }
}

#[test]
fn a_custom_reader_gets_suffix_keys_and_state_only_between_files() {
    let r = Reader::new(OneShot::default());
    let files = Files::new(["ab"]);
    assert_eq!(r.read(&files).unwrap().key, "ab:byte98");
    let e = r.serialize_state().unwrap_err();
    assert_eq!((e.kind(), e.file()), (Kind::Unimplemented, Some("ab")));
    assert_eq!(r.read(&files).unwrap().key, "ab:byte97");
    assert!(r.read(&files).unwrap_err().is_out_of_range());
    // Between files the position is only the counters: always savable.
    let state = r.serialize_state().unwrap();
    let again = Reader::new(OneShot::default());
    again.restore_state(&state).unwrap();
    assert_eq!(again.num_records_produced(), 2);
}

#[test]
fn several_readers_sharing_one_queue_read_different_files() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..12)
        .map(|i| {
            let body: String = (0..50).map(|l| format!("{i}-{l}\n")).collect();
            write(dir.path(), &format!("f{i}.txt"), body.as_bytes())
        })
        .collect();
    let queue = Files::new(files.clone());
    let seen: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..4 {
            let (queue, seen) = (&queue, &seen);
            s.spawn(move || {
                let reader = text();
                for rec in read_all(&reader, queue) {
                    seen.lock().unwrap().push((t, rec.key));
                }
            });
        }
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 12 * 50);
    // Every line exactly once, and each file read by exactly one reader.
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut keys: Vec<&String> = Vec::new();
    for (t, key) in &seen {
        let file = key.rsplit_once(':').unwrap().0.to_owned();
        assert_eq!(*owner.entry(file).or_insert(*t), *t, "{key}");
        keys.push(key);
    }
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 12 * 50);
    assert_eq!(owner.len(), 12);
}

#[test]
fn glob_returns_sorted_matches_and_not_found_naming_the_pattern() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["b.csv", "a.csv", "c.txt"] {
        write(dir.path(), name, b"");
    }
    let d = dir.path().to_str().unwrap();
    let got = LocalFs.glob(&format!("{d}/*.csv")).unwrap();
    assert_eq!(got, [format!("{d}/a.csv"), format!("{d}/b.csv")]);
    let pattern = format!("{d}/*.parquet");
    let e = LocalFs.glob(&pattern).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.to_string().contains(&pattern), "{e}");
    let e = LocalFs.glob("[").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}

#[test]
fn local_fs_size_and_open_at_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "s.bin", b"0123456789");
    assert_eq!(LocalFs.size(&f).unwrap(), 10);
    let mut rest = String::new();
    LocalFs
        .open_at(&f, 7)
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    assert_eq!(rest, "789");
    let e = LocalFs.open_at(&f, 11).err().unwrap();
    assert_eq!((e.kind(), e.file()), (Kind::DataLoss, Some(&*f)));
    let d = dir.path().to_str().unwrap();
    assert_eq!(
        LocalFs.size(d).unwrap_err().kind(),
        Kind::FailedPrecondition
    );
}
