//! Object stores through the file seam, against a real S3 server
//! (SeaweedFS on 127.0.0.1, started by `seaweed_support`).

mod reader_support;
mod seaweed_support;

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use feedstock::io::fs::FileSystem;
use feedstock::io::store::{AnyFs, ObjectStoreFs, StoreOptions};
use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
use feedstock::reader::{Reader, TextLineReader, TfRecordReader};
use feedstock::Kind;
use reader_support::{read_all, Files};
use seaweed_support::{shared, Seaweed, BUCKET};

/// The TFRecord bytes of `records`.
fn tfrecord_bytes(records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

/// Records of varied sizes, each naming its file and index.
fn records(file: usize, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut r = format!("file{file}-record{i}-").into_bytes();
            r.resize(r.len() + (i * 37) % 700, b'a' + (i % 26) as u8);
            r
        })
        .collect()
}

fn put(fs: &ObjectStoreFs, url: &str, bytes: &[u8]) {
    let mut w = fs.create(url).unwrap();
    w.write_all(bytes).unwrap();
    w.commit().unwrap();
}

/// Small chunks, so that records straddle chunk boundaries.
fn small_chunks(server: &Seaweed) -> StoreOptions {
    server.options().chunk_size(1000).read_ahead(4000)
}

#[test]
fn tfrecord_files_are_listed_and_read_from_a_bucket_as_from_disk() {
    let server = shared();
    let store = ObjectStoreFs::with_options(small_chunks(server)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut local = Vec::new();
    for f in 0..3 {
        let bytes = tfrecord_bytes(&records(f, 50 + f * 7));
        put(
            &store,
            &format!("s3://{BUCKET}/read/train-{f}.tfrecord"),
            &bytes,
        );
        let p = dir.path().join(format!("train-{f}.tfrecord"));
        std::fs::write(&p, &bytes).unwrap();
        local.push(p.to_str().unwrap().to_owned());
    }
    // An object outside the pattern, to be left out of the listing.
    put(&store, &format!("s3://{BUCKET}/read/other.txt"), b"x\n");

    let urls = store
        .glob(&format!("s3://{BUCKET}/read/train-*.tfrecord"))
        .unwrap();
    assert_eq!(
        urls,
        (0..3)
            .map(|f| format!("s3://{BUCKET}/read/train-{f}.tfrecord"))
            .collect::<Vec<_>>()
    );

    let fs: Arc<dyn FileSystem> =
        Arc::new(AnyFs::with_options(small_chunks(server)));
    let remote = Reader::with_fs(TfRecordReader::new(), fs);
    let got = read_all(&remote, &Files::new(urls.clone()));
    let want = read_all(
        &Reader::new(TfRecordReader::new()),
        &Files::new(local.clone()),
    );
    assert_eq!(got.len(), 50 + 57 + 64);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.value, w.value);
        // Same offset in the key, the URL in place of the path.
        let (gk, wk) = (
            g.key.rsplit_once(':').unwrap(),
            w.key.rsplit_once(':').unwrap(),
        );
        assert_eq!(gk.1, wk.1);
        assert!(gk.0.starts_with("s3://feedstock/read/train-"), "{}", g.key);
    }
    assert!(store.stats().requests() > 0);
}

#[test]
fn resuming_inside_an_object_reads_from_the_offset() {
    let server = shared();
    let store = ObjectStoreFs::with_options(small_chunks(server)).unwrap();
    let recs = records(9, 40);
    let bytes = tfrecord_bytes(&recs);
    let url = format!("s3://{BUCKET}/resume/a.tfrecord");
    put(&store, &url, &bytes);
    assert_eq!(store.size(&url).unwrap(), bytes.len() as u64);

    let mut r = ReaderBuilder::new().from_reader(store.open(&url).unwrap());
    for _ in 0..17 {
        r.read_record().unwrap().unwrap();
    }
    let at = r.next_position().offset;
    let mut rest =
        ReaderBuilder::new().from_reader(store.open_at(&url, at).unwrap());
    let mut got = Vec::new();
    while let Some(rec) = rest.read_record().unwrap() {
        got.push(rec.value.to_vec());
    }
    assert_eq!(got, recs[17..]);

    let e = store.open_at(&url, bytes.len() as u64 + 1).err().unwrap();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(url.as_str()));
}

#[test]
fn text_lines_read_from_a_bucket() {
    let server = shared();
    let store =
        ObjectStoreFs::with_options(server.options().chunk_size(7)).unwrap();
    let url = format!("s3://{BUCKET}/text/lines.csv");
    put(&store, &url, b"a,1\nbb,2\nccc,3\n");
    let fs: Arc<dyn FileSystem> =
        Arc::new(AnyFs::with_options(server.options().chunk_size(7)));
    let reader = Reader::with_fs(TextLineReader::new(), fs);
    let got: Vec<_> = read_all(&reader, &Files::new([url.clone()]))
        .into_iter()
        .map(|r| (r.key, r.value))
        .collect();
    assert_eq!(
        got,
        vec![
            (format!("{url}:1"), "a,1".into()),
            (format!("{url}:2"), "bb,2".into()),
            (format!("{url}:3"), "ccc,3".into()),
        ]
    );
}

#[test]
fn a_missing_object_is_not_found_naming_its_url() {
    let server = shared();
    let store = ObjectStoreFs::with_options(server.options()).unwrap();
    let url = format!("s3://{BUCKET}/missing/nothing.tfrecord");
    let e = store.open(&url).err().unwrap();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
    assert_eq!(e.file(), Some(url.as_str()));
    // Not transient: not retried.
    assert_eq!(store.stats().retries(), 0);

    let e = store
        .glob(&format!("s3://{BUCKET}/missing/*.tfrecord"))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
}

#[test]
fn a_wrong_secret_is_permission_denied_and_never_printed() {
    let server = shared();
    let secret = "not-the-secret-0123456789";
    let opts = server.options().option("aws_secret_access_key", secret);
    let store = ObjectStoreFs::with_options(opts.clone()).unwrap();
    let url = format!("s3://{BUCKET}/denied/x");
    let e = store.size(&url).unwrap_err();
    assert_eq!(e.kind(), Kind::PermissionDenied, "{e}");
    assert_eq!(e.file(), Some(url.as_str()));
    for shown in [
        e.to_string(),
        format!("{e:?}"),
        format!("{store:?}"),
        format!("{opts:?}"),
    ] {
        assert!(!shown.contains(secret), "secret printed: {shown}");
        assert!(!shown.contains(seaweed_support::SECRET_KEY), "{shown}");
    }
}

#[test]
fn an_upload_appears_whole_on_commit_and_never_when_dropped() {
    let server = shared();
    // S3 parts are at least 5 MiB; 12 MiB makes three of them.
    let store =
        ObjectStoreFs::with_options(server.options().part_size(5 << 20))
            .unwrap();
    let data: Vec<u8> = (0..12u32 << 20).map(|i| (i % 251) as u8).collect();

    let dropped = format!("s3://{BUCKET}/write/dropped.bin");
    let mut w = store.create(&dropped).unwrap();
    w.write_all(&data).unwrap();
    drop(w);
    assert_eq!(store.size(&dropped).unwrap_err().kind(), Kind::NotFound);

    let small = format!("s3://{BUCKET}/write/small-dropped.bin");
    let mut w = store.create(&small).unwrap();
    w.write_all(b"not committed").unwrap();
    drop(w);
    assert_eq!(store.size(&small).unwrap_err().kind(), Kind::NotFound);

    let kept = format!("s3://{BUCKET}/write/kept.bin");
    let mut w = store.create(&kept).unwrap();
    w.write_all(&data).unwrap();
    w.commit().unwrap();
    let mut back = Vec::new();
    store.open(&kept).unwrap().read_to_end(&mut back).unwrap();
    assert!(back == data, "the object read back differs");
}

/// The server stops in the middle of a multipart upload and comes back
/// while a part is being retried: the part is sent again under its own
/// number, the retries are counted, and the object appears whole. When
/// the retries are spent instead, the write fails naming the object and
/// the offset of the part, and nothing appears.
#[test]
fn a_part_sent_while_the_server_is_down_is_retried_and_the_object_appears_whole(
) {
    let mut server = Seaweed::start();
    // S3 parts are at least 5 MiB; 12 MiB makes three of them. The
    // retries wait up to 25 s in all, more than a restart takes.
    let opts = server
        .options()
        .part_size(5 << 20)
        .max_retries(8)
        .retry_delay(Duration::from_millis(100));
    let store = ObjectStoreFs::with_options(opts).unwrap();
    let data: Vec<u8> = (0..12u32 << 20).map(|i| (i % 253) as u8).collect();
    let url = format!("s3://{BUCKET}/fault/upload.bin");
    let mut w = store.create(&url).unwrap();
    w.write_all(&data[..6 << 20]).unwrap(); // part 0 is on its way
    server.stop();
    let back = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        server.restart();
        server
    });
    w.write_all(&data[6 << 20..]).unwrap(); // part 1 too
    w.commit().unwrap(); // part 2, then the completion
    let mut server = back.join().unwrap();
    assert!(store.stats().retries() >= 1, "no part was retried");
    let mut got = Vec::new();
    store.open(&url).unwrap().read_to_end(&mut got).unwrap();
    assert!(got == data, "the object read back differs");

    // The server stays down: the retries run out.
    let opts = server
        .options()
        .part_size(5 << 20)
        .max_retries(2)
        .retry_delay(Duration::from_millis(10));
    let store = ObjectStoreFs::with_options(opts).unwrap();
    let lost = format!("s3://{BUCKET}/fault/never.bin");
    let mut w = store.create(&lost).unwrap();
    w.write_all(&data[..6 << 20]).unwrap();
    server.stop();
    w.write_all(&data[6 << 20..]).unwrap();
    let err = w.commit().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&lost), "error does not name the object: {msg}");
    // Part 0 or 1, whichever the stop caught first.
    let offset = err.offset().expect("the error has the part's offset");
    assert!(offset == 0 || offset == 5 << 20, "{msg}");
    assert!(store.stats().retries() >= 2, "{msg}");
    server.restart();
    assert_eq!(store.size(&lost).unwrap_err().kind(), Kind::NotFound);
}

/// The server stops in the middle of a read: the error names the object and
/// the offset, the retries are counted, and once the server is back the
/// same stream goes on from the first byte it had not yet returned.
#[test]
fn a_server_stopped_mid_read_fails_naming_object_and_offset_then_resumes_exactly(
) {
    let mut server = Seaweed::start();
    let opts = server
        .options()
        .chunk_size(16 << 10)
        .read_ahead(16 << 10)
        .max_retries(2)
        .retry_delay(Duration::from_millis(10));
    let store = ObjectStoreFs::with_options(opts).unwrap();
    let recs = records(5, 3000);
    let bytes = tfrecord_bytes(&recs);
    assert!(bytes.len() > 1 << 20);
    let url = format!("s3://{BUCKET}/fault/big.tfrecord");
    put(&store, &url, &bytes);

    // Records through the TFRecord reader, over the raw stream.
    let mut reader =
        ReaderBuilder::new().from_reader(store.open(&url).unwrap());
    let mut delivered: Vec<Vec<u8>> = Vec::new();
    for _ in 0..100 {
        delivered.push(reader.read_record().unwrap().unwrap().value.to_vec());
    }
    server.stop();
    let err = loop {
        match reader.read_record() {
            Ok(Some(r)) => delivered.push(r.value.to_vec()),
            Ok(None) => panic!("the whole object was read ahead"),
            Err(e) => break e,
        }
    };
    let msg = err.to_string();
    assert!(msg.contains(&url), "error does not name the object: {msg}");
    assert!(err.offset().is_some(), "error has no offset: {msg}");
    assert!(msg.contains("at byte") || msg.contains("offset"), "{msg}");
    // The kind, the object and the offset are said once each (issue 33,
    // item 9: not "Unknown: Unknown: ... (file, offset) (file, offset)").
    assert_eq!(err.kind(), Kind::Unknown, "{msg}");
    assert!(
        msg.starts_with("Unknown: object store request failed"),
        "{msg}"
    );
    assert_eq!(msg.matches("Unknown").count(), 1, "{msg}");
    assert_eq!(msg.matches(&format!("file {url}")).count(), 1, "{msg}");
    assert_eq!(msg.matches("offset").count(), 1, "{msg}");
    assert_eq!(store.stats().retries(), 2, "{msg}");
    assert!(store.stats().failures() >= 1);
    let resume_at = reader.next_position().offset;
    assert!(err.offset().unwrap() >= resume_at, "{msg}");

    server.restart();
    // Resume where the last delivered record ended: nothing twice.
    let mut rest = ReaderBuilder::new()
        .from_reader(store.open_at(&url, resume_at).unwrap());
    while let Some(r) = rest.read_record().unwrap() {
        delivered.push(r.value.to_vec());
    }
    assert_eq!(delivered.len(), recs.len());
    assert!(delivered == recs, "records lost, repeated or reordered");

    // The byte stream itself: after an error, the next read goes on at the
    // first byte not yet returned.
    let mut raw = store.open(&url).unwrap();
    let mut got = vec![0u8; 100_000];
    raw.read_exact(&mut got).unwrap();
    server.stop();
    let mut buf = [0u8; 4096];
    let e = loop {
        match raw.read(&mut buf) {
            Ok(0) => panic!("the whole object was read ahead"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => break e,
        }
    };
    assert!(e.to_string().contains(&url), "{e}");
    server.restart();
    raw.read_to_end(&mut got).unwrap();
    assert!(got == bytes, "bytes lost or repeated across the failure");
}

#[test]
fn file_urls_and_paths_read_the_local_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "x\ny\n").unwrap();
    let url = format!("file://{}", path.display());
    let fs = AnyFs::new();
    assert!(!AnyFs::is_url(&url));
    assert_eq!(fs.size(&url).unwrap(), 4);
    let mut s = String::new();
    fs.open(&url).unwrap().read_to_string(&mut s).unwrap();
    assert_eq!(s, "x\ny\n");
    let found = fs
        .glob(&format!("file://{}/*.txt", dir.path().display()))
        .unwrap();
    assert_eq!(found, std::slice::from_ref(&url));
    let missing = format!("file://{}/none.txt", dir.path().display());
    let e = fs.open(&missing).err().unwrap();
    assert_eq!(e.kind(), Kind::NotFound);
    assert_eq!(e.file(), Some(missing.as_str()), "{e}");
    let e = fs.size(&missing).unwrap_err();
    assert_eq!(e.file(), Some(missing.as_str()), "{e}");
    let e = fs.open_at(&url, 5).err().unwrap();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(url.as_str()), "{e}");
    let pattern = format!("file://{}/*.csv", dir.path().display());
    let e = fs.glob(&pattern).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert_eq!(e.file(), Some(pattern.as_str()), "{e}");
    let text = e.to_string();
    assert_eq!(text.matches(pattern.as_str()).count(), 2, "{e}");
    assert_eq!(
        text.matches(&format!(" {}", dir.path().display())).count(),
        0,
        "{e}"
    );
    // Local paths never start the store runtime.
    assert!(format!("{fs:?}").contains("store: None"), "{fs:?}");
}

#[test]
fn a_reader_names_the_url_it_was_given_and_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = tfrecord_bytes(&records(0, 3));
    let second = 16 + records(0, 3)[0].len();
    bytes[second + 12] ^= 1; // the second record's data
    let path = dir.path().join("bad.tfrecord");
    std::fs::write(&path, &bytes).unwrap();
    let url = format!("file://{}", path.display());
    let reader =
        Reader::with_fs(TfRecordReader::new(), Arc::new(AnyFs::new()));
    let files = Files::new([url.clone()]);
    reader.read(&files).unwrap();
    let e = reader.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(url.as_str()), "{e}");
    assert_eq!(e.offset(), Some(second as u64), "{e}");
    assert!(e.to_string().contains(&url), "{e}");

    let missing = format!("file://{}/none.tfrecord", dir.path().display());
    let e = reader.read(&Files::new([missing.clone()])).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
    assert_eq!(e.file(), Some(missing.as_str()), "{e}");

    let server = shared();
    let fs: Arc<dyn FileSystem> =
        Arc::new(AnyFs::with_options(server.options()));
    let reader = Reader::with_fs(TfRecordReader::new(), fs);
    let missing = format!("s3://{BUCKET}/missing/by-reader.tfrecord");
    let e = reader.read(&Files::new([missing.clone()])).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
    assert_eq!(e.file(), Some(missing.as_str()), "{e}");
    assert!(e.to_string().contains(&missing), "{e}");
}

/// Sidecar indexes beside objects are hidden objects: a data glob over
/// the bucket never lists them, the stream finds and uses them, and a
/// sidecar read as TFRecords is named as an index (issue 14).
#[test]
fn sidecars_in_a_bucket_stay_out_of_data_globs() {
    use feedstock::input::stream::{Order, RecordStream};
    use feedstock::io::index::{sidecar_path, IndexCheck, RecordIndex};

    let server = shared();
    let store = ObjectStoreFs::with_options(small_chunks(server)).unwrap();
    let (mut urls, mut sides, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for f in 0..3 {
        let recs = records(20 + f, 40 + f * 9);
        let url = format!("s3://{BUCKET}/sidecar/train-{f}.tfrecord");
        put(&store, &url, &tfrecord_bytes(&recs));
        let index = RecordIndex::build(&store, &url, None).unwrap();
        let side = sidecar_path(&url);
        assert_eq!(
            side,
            format!(
                "s3://{BUCKET}/sidecar/.train-{f}.tfrecord.feedstock-index"
            )
        );
        put(&store, &side, &index.to_bytes());
        urls.push(url);
        sides.push(side);
        all.extend(recs);
    }
    for pattern in ["train-*", "*", "*.tfrecord", "?rain-[0-2]*"] {
        let pattern = format!("s3://{BUCKET}/sidecar/{pattern}");
        assert_eq!(store.glob(&pattern).unwrap(), urls, "{pattern}");
    }
    let hidden = store.glob(&format!("s3://{BUCKET}/sidecar/.*")).unwrap();
    assert_eq!(hidden, sides);
    for url in &urls {
        let index =
            RecordIndex::load(&store, url, None, IndexCheck::Full).unwrap();
        assert!(!index.is_empty());
    }

    let fs: Arc<dyn FileSystem> =
        Arc::new(ObjectStoreFs::with_options(small_chunks(server)).unwrap());
    let mut b = RecordStream::builder(urls.clone());
    b.file_system(Arc::clone(&fs));
    let seq: Vec<Vec<u8>> = b
        .build()
        .unwrap()
        .map(|r| r.unwrap().value.to_vec())
        .collect();
    assert!(seq == all, "records lost, repeated or reordered");
    b.order(Order::Global).seed(5).threads(2).block_size(16);
    let mut global: Vec<Vec<u8>> = b
        .build()
        .unwrap()
        .map(|r| r.unwrap().value.to_vec())
        .collect();
    assert!(global != all, "not shuffled");
    global.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert!(global == sorted, "the shuffle lost or repeated records");

    let reader = Reader::with_fs(TfRecordReader::new(), fs);
    let e = reader.read(&Files::new([sides[0].clone()])).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    assert_eq!(e.file(), Some(sides[0].as_str()), "{e}");
    assert!(e.message().contains("record index"), "{e}");
}

/// The two ETags of a "the object changed while it was being read (ETag
/// a → b)" message; they must differ.
fn changed_etags(msg: &str) -> (String, String) {
    let what = "the object changed while it was being read (ETag ";
    let at = msg
        .find(what)
        .unwrap_or_else(|| panic!("not a changed-object error: {msg}"));
    let rest = &msg[at + what.len()..];
    let (tags, _) = rest.split_once(')').expect("closing parenthesis");
    let (a, b) = tags.split_once(" → ").expect("ETag a → b");
    assert!(!a.is_empty() && !b.is_empty() && a != b, "{msg}");
    (a.to_owned(), b.to_owned())
}

/// A changed-object error as it must be: its kind, naming the URL, kind
/// and file said once each.
fn assert_changed(e: &feedstock::Error, url: &str) {
    let msg = e.to_string();
    assert_eq!(e.kind(), Kind::FailedPrecondition, "{msg}");
    assert_eq!(e.file(), Some(url), "{msg}");
    changed_etags(&msg);
    assert_eq!(msg.matches(url).count(), 1, "{msg}");
    assert_eq!(msg.matches("FailedPrecondition").count(), 1, "{msg}");
    assert!(msg.matches("offset").count() <= 1, "{msg}");
}

/// An object overwritten while a stream reads it in small ranged chunks
/// (issue 33, item 3): every later chunk is asked for with the ETag the
/// first request saw, so the read fails naming the URL instead of going
/// on with the new object's bytes; the records delivered before are all
/// the old object's, and the next read fails the same way.
#[test]
fn an_object_overwritten_mid_read_fails_naming_it_and_never_mixes_versions() {
    let server = shared();
    let store = ObjectStoreFs::with_options(small_chunks(server)).unwrap();
    let old = records(30, 400);
    let new = records(31, 400);
    let url = format!("s3://{BUCKET}/changed/a.tfrecord");
    put(&store, &url, &tfrecord_bytes(&old));

    let mut reader =
        ReaderBuilder::new().from_reader(store.open(&url).unwrap());
    let mut got: Vec<Vec<u8>> = Vec::new();
    for _ in 0..20 {
        got.push(reader.read_record().unwrap().unwrap().value.to_vec());
    }
    put(&store, &url, &tfrecord_bytes(&new));
    let err = loop {
        match reader.read_record() {
            Ok(Some(r)) => got.push(r.value.to_vec()),
            Ok(None) => panic!(
                "read to the end across an overwrite ({} records)",
                got.len()
            ),
            Err(e) => break e,
        }
    };
    assert_changed(&err, &url);
    assert!(
        got[..] == old[..got.len()],
        "records of the new object read"
    );
    let again = reader.read_record().unwrap_err();
    assert_eq!(again.kind(), Kind::FailedPrecondition, "{again}");
}

/// The same for text lines through a [`Reader`] (a CSV file), and for a
/// positioned-read handle (what indexed reads use).
#[test]
fn text_lines_and_positioned_reads_of_an_overwritten_object_fail_too() {
    let server = shared();
    let opts = server.options().chunk_size(64).read_ahead(64);
    let store = ObjectStoreFs::with_options(opts.clone()).unwrap();
    let url = format!("s3://{BUCKET}/changed/lines.csv");
    let old: String = (0..2000).map(|i| format!("{i},old\n")).collect();
    let new: String = (0..2000).map(|i| format!("{i},new\n")).collect();
    put(&store, &url, old.as_bytes());

    let fs: Arc<dyn FileSystem> = Arc::new(AnyFs::with_options(opts));
    let reader = Reader::with_fs(TextLineReader::new(), fs);
    let files = Files::new([url.clone()]);
    for i in 0..10 {
        let r = reader.read(&files).unwrap();
        assert_eq!(&r.value[..], format!("{i},old").as_bytes());
    }
    put(&store, &url, new.as_bytes());
    let mut lines = 10;
    let err = loop {
        match reader.read(&files) {
            Ok(r) => {
                assert_eq!(&r.value[..], format!("{lines},old").as_bytes());
                lines += 1;
            }
            Err(e) => break e,
        }
    };
    assert_changed(&err, &url);
    assert!(lines < 2000, "every line read across an overwrite");

    put(&store, &url, old.as_bytes());
    let handle = store.open_read_at(&url).unwrap().unwrap();
    assert_eq!(&handle.read_at(0, 6).unwrap()[..], b"0,old\n");
    put(&store, &url, new.as_bytes());
    let err = handle.read_at(600, 20).unwrap_err();
    assert_changed(&err, &url);
    assert_eq!(err.offset(), Some(600), "{err}");
}
