// The data the docs' Rust examples read, included by their hidden
// first lines: the shipped digits (1797 examples) as two TFRecord files
// of `tf.train.Example`s, `pixels` (64 int64) and `label` (int64), in a
// temporary directory. Returns the directory (deleted when dropped) and
// the glob `DIR/train-*.tfrecord`.
#[allow(dead_code)]
pub(crate) fn digits_tfrecords() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::io::read_to_string(flate2::read::GzDecoder::new(
        std::fs::File::open(DIGITS_CSV).unwrap(),
    ))
    .unwrap();
    for shard in 0..2 {
        let path = dir.path().join(format!("train-{shard}.tfrecord"));
        let file = std::fs::File::create(path).unwrap();
        let mut w = feedstock::io::tfrecord::Writer::new(file);
        for line in text.lines().skip(shard).step_by(2) {
            let v: Vec<i64> =
                line.split(',').map(|s| s.parse().unwrap()).collect();
            let ex = feedstock::proto::Example::builder()
                .int64("pixels", v[..64].to_vec())
                .int64("label", [v[64]])
                .build();
            w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
        }
        w.finish().unwrap();
    }
    let pattern = dir.path().join("train-*.tfrecord");
    let pattern = pattern.to_str().unwrap().to_owned();
    (dir, pattern)
}

// The shipped digits, gzip-compressed CSV: 64 pixels and a label a line.
#[allow(dead_code)]
pub(crate) const DIGITS_CSV: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/digits.csv.gz");
