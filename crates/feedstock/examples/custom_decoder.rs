//! Custom data readers guide, "Writing an Op for a record format": a
//! decoder for a record format of our own, turning each record into
//! tensors and naming the record's key in every error.
//!
//! The file format is TFRecord (read by the built-in `TfRecordReader`);
//! the record format is ours, "PTS1", a labelled point cloud:
//!
//! ```text
//! 4 bytes  magic "PTS1"
//! u16 LE   n, the number of points
//! n × 3    f32 LE coordinates x, y, z
//! u8       label
//! ```
//!
//! [`PointCloudDecoder::decode`] gives two tensors: the points, float32
//! `[n, 3]` (the coordinates through `decode_raw`, then reshaped, as the
//! guide suggests composing existing ops), and the label, an int32
//! scalar. A malformed record is an InvalidArgument error that names the
//! record key and the part of the record at fault, so that the bad data
//! can be tracked down.
//!
//! Run with `cargo run --example custom_decoder`.

use std::error::Error;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::raw::{decode_raw, ByteOrder};
use feedstock::input::string_input_producer;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, Kind, Tensor};

const MAGIC: &[u8; 4] = b"PTS1";

/// Decodes "PTS1" point-cloud records.
#[derive(Debug, Clone, Copy)]
struct PointCloudDecoder {
    /// Records with more points are refused.
    max_points: usize,
}

impl PointCloudDecoder {
    /// Decodes one record into `[points (f32 [n, 3]), label (i32 [])]`.
    /// `key` (for example `train.tfrecord:1024`) is named in errors.
    fn decode(
        &self,
        record: &Bytes,
        key: &str,
    ) -> feedstock::Result<Vec<Tensor>> {
        let bad = |field: &str, msg: String| {
            feedstock::Error::invalid_argument(msg)
                .with_key(key)
                .with_field(field)
        };
        if record.len() < 6 || &record[..4] != MAGIC {
            return Err(bad("magic", "not a PTS1 record".to_owned()));
        }
        let n = usize::from(u16::from_le_bytes([record[4], record[5]]));
        if n > self.max_points {
            return Err(bad(
                "n",
                format!(
                    "{n} points, more than the {} allowed",
                    self.max_points
                ),
            ));
        }
        let want = 6 + n * 3 * 4 + 1;
        if record.len() != want {
            return Err(bad(
                "points",
                format!(
                    "a record of {n} points has {want} bytes, this one has {}",
                    record.len()
                ),
            ));
        }
        let coords = record.slice(6..want - 1);
        let points = decode_raw(&coords, DType::F32, ByteOrder::LittleEndian)
            .and_then(|t| t.reshape([n, 3]))
            .map_err(|e| e.with_key(key).with_field("points"))?;
        let label = Tensor::scalar(i32::from(record[want - 1]));
        Ok(vec![points, label])
    }
}

/// Encodes a PTS1 record.
fn encode(points: &[[f32; 3]], label: u8) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(points.len() as u16).to_le_bytes());
    for p in points {
        for c in p {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    out.push(label);
    out
}

/// Cloud number `i`: `i + 1` points on a line, labelled `i % 4`.
fn cloud(i: usize) -> (Vec<[f32; 3]>, u8) {
    let points = (0..=i).map(|k| [k as f32, i as f32, -(k as f32)]).collect();
    (points, (i % 4) as u8)
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("clouds.tfrecord");
    let file = path.to_str().unwrap().to_owned();

    // Six good records, and one cut short in the middle of the file. Its
    // key is the file and the byte offset where the record starts.
    let mut writer = WriterBuilder::new().create(&path)?;
    let mut bad_key = String::new();
    for i in 0..6 {
        let (points, label) = cloud(i);
        writer.write_record(&encode(&points, label))?;
        if i == 2 {
            bad_key = format!("{file}:{}", writer.position().offset);
            let mut cut = encode(&points, label);
            cut.truncate(cut.len() - 5);
            writer.write_record(&cut)?;
        }
    }
    writer.finish()?;

    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, [file])
        .num_epochs(1)
        .build()?;
    let reader = Reader::new(TfRecordReader::new());
    let decoder = PointCloudDecoder { max_points: 1000 };
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;

    let mut decoded = 0;
    let mut errors = Vec::new();
    let end = loop {
        let record = match reader.read(&filename_queue) {
            Ok(record) => record,
            Err(e) => break e,
        };
        match decoder.decode(&record.value, &record.key) {
            Ok(tensors) => {
                let (points, label) = (&tensors[0], &tensors[1]);
                // The clouds were written in order, the bad one aside.
                let (want_points, want_label) = cloud(decoded);
                assert_eq!(points.dims(), &[want_points.len(), 3]);
                assert_eq!(
                    points.as_slice::<f32>()?,
                    want_points.concat().as_slice()
                );
                assert_eq!(
                    label.scalar_value::<i32>()?,
                    i32::from(want_label)
                );
                decoded += 1;
            }
            // Reported, not dropped: the error says where the record is.
            Err(e) => {
                println!("skipping a bad record: {e}");
                errors.push(e);
            }
        }
    };
    assert!(end.is_out_of_range(), "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    assert_eq!(decoded, 6);
    assert_eq!(errors.len(), 1);
    let err = &errors[0];
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.key(), Some(bad_key.as_str()));
    assert_eq!(err.field(), Some("points"));

    // Not our format at all.
    let err = decoder
        .decode(&Bytes::from_static(b"PNG...."), "x:0")
        .unwrap_err();
    assert_eq!((err.key(), err.field()), (Some("x:0"), Some("magic")));
    println!("decoded {decoded} point clouds, reported 1 bad record");
    Ok(())
}
