//! One function per area: builds the feedstock call from a case's input.

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::{DType, Error, Result};
use serde_json::Value as J;

use crate::enc::{self, unhex};

pub fn run(area: &str, input: &J) -> Result<Vec<J>> {
    match area {
        "csv" => csv(input),
        "to_number" => to_number(input),
        other => Err(Error::unimplemented(format!("area {other}"))),
    }
}

fn dtype(j: &J) -> DType {
    DType::from_name(j.as_str().unwrap()).unwrap()
}

fn csv(input: &J) -> Result<Vec<J>> {
    let mut defaults = Vec::new();
    for d in input["defaults"].as_array().unwrap() {
        let dt = dtype(&d["dtype"]);
        let v = &d["value"];
        defaults.push(if v.is_null() {
            RecordDefault::required(dt)?
        } else {
            match dt {
                DType::I32 => RecordDefault::i32(v.as_i64().unwrap() as i32),
                DType::I64 => RecordDefault::i64(v.as_i64().unwrap()),
                DType::F32 => RecordDefault::f32(v.as_f64().unwrap() as f32),
                DType::F64 => RecordDefault::f64(v.as_f64().unwrap()),
                _ => RecordDefault::string(
                    v.as_str().unwrap().as_bytes().to_vec(),
                ),
            }
        });
    }
    let mut b = CsvDecoder::builder(defaults);
    b.field_delim(input["field_delim"].as_str().unwrap().as_bytes()[0]);
    b.use_quote_delim(input["use_quote_delim"].as_bool().unwrap());
    if let Some(na) = input["na_value"].as_str() {
        b.na_value(na.as_bytes().to_vec());
    }
    if let Some(cols) = input["select_cols"].as_array() {
        b.select_cols(
            cols.iter()
                .map(|c| c.as_u64().unwrap() as usize)
                .collect::<Vec<_>>(),
        );
    }
    let dec = b.build()?;
    let rec = Bytes::from(unhex(input["record"].as_str().unwrap()));
    let cols = dec.decode_batch(&[rec], &["k"])?;
    Ok(cols.iter().map(enc::tensor).collect())
}

fn to_number(input: &J) -> Result<Vec<J>> {
    let s = Bytes::from(unhex(input["s"].as_str().unwrap()));
    let t = feedstock::Tensor::vector(vec![s]);
    let out =
        feedstock::decode::raw::string_to_number(&t, dtype(&input["dtype"]))?;
    Ok(vec![enc::tensor(&out)])
}
