//! Fuzzes `CsvDecoder`: any record and any options must give values or an
//! InvalidArgument error naming the column, never a panic, and the
//! one-record and batch paths must agree.
//!
//! Needs in fuzz/Cargo.toml:
//!
//! ```toml
//! [[bin]]
//! name = "decode_csv"
//! path = "fuzz_targets/decode_csv.rs"
//! test = false
//! doc = false
//! bench = false
//! ```
#![no_main]

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::Records;
use feedstock::{DType, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Header: [delim, flags, ncols, dtype bits..., na_len], then the
    // na_value and the record.
    let Some((&[delim, flags, ncols], rest)) = data.split_first_chunk::<3>()
    else {
        return;
    };
    let ncols = usize::from(ncols % 6) + 1;
    if rest.len() < ncols + 1 {
        return;
    }
    let (kinds, rest) = rest.split_at(ncols);
    let na_len = usize::from(rest[0] % 4).min(rest.len() - 1);
    let (na, record) = rest[1..].split_at(na_len);

    let defaults: Vec<RecordDefault> = kinds
        .iter()
        .map(|&k| {
            let dtype = [DType::I32, DType::I64, DType::F32, DType::F64,
                DType::String][usize::from(k % 5)];
            if k & 0x80 != 0 {
                return RecordDefault::required(dtype).unwrap();
            }
            match dtype {
                DType::I32 => RecordDefault::i32(-1),
                DType::I64 => RecordDefault::i64(-1),
                DType::F32 => RecordDefault::f32(-1.0),
                DType::F64 => RecordDefault::f64(-1.0),
                _ => RecordDefault::string("dflt"),
            }
        })
        .collect();
    let mut builder = CsvDecoder::builder(defaults);
    builder
        .field_delim(delim)
        .use_quote_delim(flags & 1 != 0)
        .na_value(Bytes::copy_from_slice(na));
    if flags & 2 != 0 {
        // Select every other column.
        let cols: Vec<usize> = (0..ncols).map(|c| 2 * c).collect();
        builder.select_cols(cols);
    }
    let Ok(decoder) = builder.build() else {
        return;
    };

    let record = Bytes::copy_from_slice(record);
    let single = decoder.decode(&record, "fuzz:1");
    let pair = [record.clone(), record];
    let batch = Records::new(&pair)
        .with_keys(&["a", "b"])
        .and_then(|r| decoder.decode_batch(r));
    match (single, batch) {
        (Ok(scalars), Ok(columns)) => {
            assert_eq!(scalars.len(), ncols);
            assert_eq!(columns.len(), ncols);
            for (s, c) in scalars.iter().zip(&columns) {
                assert_eq!(s.rank(), 0);
                assert_eq!(c.dims(), &[2]);
                assert_eq!(s.dtype(), c.dtype());
            }
        }
        (Err(e), Err(b)) => {
            assert_eq!(e.kind(), Kind::InvalidArgument);
            assert_eq!(e.key(), Some("fuzz:1"));
            assert!(e.field().is_some_and(|f| f.starts_with("column ")));
            assert_eq!(b.key(), Some("a"));
            assert_eq!(e.message(), b.message());
        }
        (s, b) => panic!("paths disagree: {s:?} vs {b:?}"),
    }
});
