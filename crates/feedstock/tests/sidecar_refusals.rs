//! A sidecar index that cannot mislead (issue 33): whatever lies under a
//! sidecar's name, opening the index either gives an index that covers
//! the data file exactly or fails quickly with an error naming the
//! sidecar. A pipe or device is refused before it is opened (a FIFO
//! would block the open, `/dev/zero` never ends), an oversized sidecar
//! before a byte of it is read, one that is not an index after its
//! header; and a sidecar whose CRC and fingerprint check but whose
//! records do not cover the file (half of them, or more than there are)
//! is refused rather than used to hide the rest of the file.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use feedstock::input::stream::RecordStream;
use feedstock::io::fs::{FileSystem, LocalFs};
use feedstock::io::index::{sidecar_path, IndexCheck, RecordIndex};
use feedstock::io::tfrecord::{masked_crc32c, WriterBuilder};
use feedstock::io::Compression;
use feedstock::{Error, Kind, Result};

/// Writes `n` records to `dir/name` and returns its path.
fn data_file(dir: &Path, name: &str, n: usize) -> String {
    let path = dir.join(name);
    let path = path.to_str().unwrap().to_owned();
    let c = Compression::from_path(&path);
    let mut w = WriterBuilder::new()
        .compression(c)
        .from_writer(std::fs::File::create(&path).unwrap());
    for i in 0..n {
        w.write_record(format!("record {i:04}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    path
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Sidecar bytes written by hand, in the documented format (magic,
/// version, the protobuf message, a masked CRC32C of all before it), for
/// the fingerprint of `index` but the record lengths `lengths`.
fn sidecar_listing(index: &RecordIndex, lengths: &[u64]) -> Vec<u8> {
    let fp = index.fingerprint();
    let mut out = b"fsindex\0".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    let c = index.compression().tf_name();
    if !c.is_empty() {
        out.push(0x0a);
        varint(c.len() as u64, &mut out);
        out.extend_from_slice(c.as_bytes());
    }
    out.push(0x10);
    varint(fp.size, &mut out);
    for (tag, crc) in [
        (0x1d, fp.head_crc),
        (0x25, fp.tail_crc),
        (0x2d, fp.file_crc),
    ] {
        out.push(tag);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    let mut packed = Vec::new();
    for &l in lengths {
        varint(l, &mut packed);
    }
    out.push(0x32);
    varint(packed.len() as u64, &mut out);
    out.extend_from_slice(&packed);
    let crc = masked_crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The data lengths of every record `index` lists.
fn lengths(index: &RecordIndex) -> Vec<u64> {
    (0..index.len())
        .map(|i| index.data_len(i).unwrap())
        .collect()
}

/// Runs `f` on a thread of its own and returns its result, or, if it
/// has not returned within `secs` seconds, calls `unblock` (to let the
/// thread end) and fails the test: a hang fails, it does not hang CI.
fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
    unblock: impl FnOnce(),
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(_) => {
            unblock();
            panic!("{what} did not return within {secs} s");
        }
    }
}

/// The error of opening `path`'s index, as `RecordIndex::open` and the
/// record stream give it, each within 20 seconds.
fn open_errors(path: &str, unblock: impl Fn()) -> [Error; 2] {
    let p = path.to_owned();
    let opened = within(
        20,
        "RecordIndex::open",
        move || RecordIndex::open(&LocalFs, &p, None).map(|i| i.len()),
        &unblock,
    );
    let p = path.to_owned();
    let streamed = within(
        20,
        "RecordStream::build",
        move || RecordStream::builder(vec![p]).build().map(|s| s.count()),
        &unblock,
    );
    [
        opened.expect_err("RecordIndex::open used the sidecar"),
        streamed.expect_err("the record stream used the sidecar"),
    ]
}

fn names_the_sidecar(e: &Error, side: &str) {
    assert_eq!(e.file(), Some(side), "{e}");
    assert!(e.to_string().contains(side), "{e}");
}

#[test]
fn a_fifo_sidecar_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = data_file(dir.path(), "data.tfrecord", 10);
    let side = sidecar_path(&path);
    let made = std::process::Command::new("mkfifo")
        .arg(&side)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {side}");
    // On a hang, a writer opening the FIFO lets the blocked open return.
    let unblock = || {
        let _ = std::fs::OpenOptions::new().write(true).open(&side);
    };
    for e in open_errors(&path, unblock) {
        assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
        names_the_sidecar(&e, &side);
        assert!(e.message().contains("not a regular file"), "{e}");
    }
}

#[test]
fn a_sidecar_linked_to_a_device_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = data_file(dir.path(), "data.tfrecord", 10);
    let side = sidecar_path(&path);
    std::os::unix::fs::symlink("/dev/zero", &side).unwrap();
    for e in open_errors(&path, || ()) {
        assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
        names_the_sidecar(&e, &side);
        assert!(e.message().contains("not a regular file"), "{e}");
    }
    // A directory under the sidecar's name is refused too.
    std::fs::remove_file(&side).unwrap();
    std::fs::create_dir(&side).unwrap();
    for e in open_errors(&path, || ()) {
        assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
        names_the_sidecar(&e, &side);
    }
}

/// The local file system, counting the bytes read from files opened
/// through it.
#[derive(Debug, Default)]
struct Counting {
    read: Arc<AtomicU64>,
}

struct CountingRead {
    inner: Box<dyn Read + Send>,
    read: Arc<AtomicU64>,
}

impl Read for CountingRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl FileSystem for Counting {
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        Ok(Box::new(CountingRead {
            inner: LocalFs.open(path)?,
            read: self.read.clone(),
        }))
    }
    fn size(&self, path: &str) -> Result<u64> {
        LocalFs.size(path)
    }
    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        LocalFs.glob(pattern)
    }
    fn is_stream(&self, path: &str) -> Result<bool> {
        LocalFs.is_stream(path)
    }
}

#[test]
fn an_oversized_sidecar_is_refused_before_a_byte_of_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = data_file(dir.path(), "data.tfrecord", 10);
    let side = sidecar_path(&path);
    // A sparse file of 3 GiB that starts as an index does: on ext4 and
    // tmpfs alike it takes no space, and its size is what it says.
    let index = RecordIndex::build(&LocalFs, &path, None).unwrap();
    std::fs::write(&side, index.to_bytes()).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&side).unwrap();
    f.set_len(3 << 30).unwrap();
    drop(f);
    assert_eq!(std::fs::metadata(&side).unwrap().len(), 3 << 30);

    let fs = Counting::default();
    let e = RecordIndex::load(&fs, &path, None, IndexCheck::Sampled)
        .expect_err("a 3 GiB sidecar of a 10-record file was used");
    assert_eq!(fs.read.load(Ordering::Relaxed), 0, "bytes of it were read");
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    names_the_sidecar(&e, &side);
    assert!(e.message().contains("larger than"), "{e}");
    for e in open_errors(&path, || ()) {
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        names_the_sidecar(&e, &side);
    }
}

#[test]
fn a_sidecar_without_the_magic_is_refused_after_its_header() {
    let dir = tempfile::tempdir().unwrap();
    // 2000 records: an index of this file may be some kilobytes.
    let path = data_file(dir.path(), "data.tfrecord", 2000);
    let side = sidecar_path(&path);
    std::fs::write(&side, vec![b'x'; 2000]).unwrap();
    let fs = Counting::default();
    let e = RecordIndex::load(&fs, &path, None, IndexCheck::Sampled)
        .expect_err("garbage was used as an index");
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    names_the_sidecar(&e, &side);
    assert!(e.message().contains("not a record index"), "{e}");
    let read = fs.read.load(Ordering::Relaxed);
    assert!(read <= 12, "{read} bytes read before the magic was checked");
}

#[test]
fn a_sidecar_whose_records_do_not_cover_the_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = data_file(dir.path(), "data.tfrecord", 10);
    let side = sidecar_path(&path);
    let index = RecordIndex::build(&LocalFs, &path, None).unwrap();
    let all = lengths(&index);
    assert_eq!(all.len(), 10);

    // Written by hand, the whole list is the index `to_bytes` writes.
    let whole = sidecar_listing(&index, &all);
    assert_eq!(whole, index.to_bytes());
    std::fs::write(&side, &whole).unwrap();
    assert_eq!(RecordIndex::open(&LocalFs, &path, None).unwrap(), index);

    let mut more = all.clone();
    more.push(3);
    let mut longer = all.clone();
    longer[9] += 1;
    for (what, listed) in [
        ("half the records", all[..5].to_vec()),
        ("no record", Vec::new()),
        ("a record too many", more),
        ("a last record too long", longer),
    ] {
        // Its CRC and fingerprint check: only the lengths are wrong.
        std::fs::write(&side, sidecar_listing(&index, &listed)).unwrap();
        for e in open_errors(&path, || ()) {
            assert_eq!(e.kind(), Kind::InvalidArgument, "{what}: {e}");
            names_the_sidecar(&e, &side);
            assert!(e.message().contains("cover"), "{what}: {e}");
        }
        for check in [IndexCheck::Sampled, IndexCheck::Full] {
            let e = RecordIndex::load(&LocalFs, &path, None, check)
                .expect_err(what);
            assert_eq!(e.kind(), Kind::InvalidArgument, "{what}: {e}");
        }
    }
}

#[test]
fn a_compressed_files_sidecar_is_checked_for_cover_by_a_full_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = data_file(dir.path(), "data.tfrecord.gz", 10);
    let side = sidecar_path(&path);
    let index = RecordIndex::build(&LocalFs, &path, None).unwrap();
    let all = lengths(&index);
    std::fs::write(&side, sidecar_listing(&index, &all)).unwrap();
    assert_eq!(
        RecordIndex::load(&LocalFs, &path, None, IndexCheck::Full).unwrap(),
        index
    );
    std::fs::write(&side, sidecar_listing(&index, &all[..5])).unwrap();
    let e = RecordIndex::load(&LocalFs, &path, None, IndexCheck::Full)
        .expect_err("half a compressed file's records were used");
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    names_the_sidecar(&e, &side);
    assert!(e.message().contains("cover"), "{e}");
}
