//! One function per area: builds the feedstock call from a case's input.

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::Records;
use feedstock::decode::example::{
    parse_example, parse_single_example, parse_single_sequence_example,
    FeatureSpec, FixedSequence, Sparse,
};
use feedstock::decode::raw::{decode_compressed, decode_raw, ByteOrder};
use feedstock::decode::image::{decode_jpeg, decode_png, Channels};
use feedstock::transform::per_image_standardization;
use feedstock::io::Compression;
use feedstock::reader::{
    FixedLengthRecordReader, Reader, TextLineReader, TfRecordReader,
    WorkQueue,
};
use feedstock::{DType, Error, Result, Tensor};
use serde_json::Value as J;

use crate::enc::{self, unhex};

pub fn run(area: &str, input: &J) -> Result<Vec<J>> {
    match area {
        "csv" => csv(input),
        "to_number" => to_number(input),
        "example_single" => example(input, false),
        "example_batch" => example(input, true),
        "sequence" => sequence(input),
        "text_line" => read_all(
            Reader::new(
                TextLineReader::builder()
                    .skip_header_lines(input["skip"].as_u64().unwrap())
                    .build(),
            ),
            input,
        ),
        "fixed_length" => read_all(
            Reader::new(
                FixedLengthRecordReader::builder(
                    input["record"].as_u64().unwrap(),
                )
                .header_bytes(input["header"].as_u64().unwrap())
                .footer_bytes(input["footer"].as_u64().unwrap())
                .hop_bytes(input["hop"].as_u64().unwrap())
                .compression(compression(input))
                .build()?,
            ),
            input,
        ),
        "tfrecord" => read_all(
            Reader::new(
                TfRecordReader::builder()
                    .compression(compression(input))
                    .build(),
            ),
            input,
        ),
        "decode_raw" => {
            let order = if input["little"].as_bool().unwrap() {
                ByteOrder::LittleEndian
            } else {
                ByteOrder::BigEndian
            };
            let b = Bytes::from(unhex(input["bytes"].as_str().unwrap()));
            let t = decode_raw(&b, dtype(&input["dtype"]), order)?;
            Ok(vec![enc::tensor(&t)])
        }
        "png" | "jpeg" => {
            let b = Bytes::from(unhex(input["bytes"].as_str().unwrap()));
            let ch =
                Channels::from_count(input["channels"].as_u64().unwrap() as _)?;
            let t = if area == "png" {
                decode_png(&b, ch, "k")?
            } else {
                decode_jpeg(&b, ch, "k")?
            };
            Ok(vec![enc::tensor(&t)])
        }
        "standardize" => {
            let img = enc::decode(&input["image"]);
            Ok(vec![enc::tensor(&per_image_standardization(&img)?)])
        }
        "batch" => batch_case(input),
        "producer" => producer_case(input),
        "decode_compressed" => {
            let b = Bytes::from(unhex(input["bytes"].as_str().unwrap()));
            let out = decode_compressed(&b, compression(input))?;
            Ok(vec![enc::tensor(&Tensor::vector(vec![out]))])
        }
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
    let cols = dec.decode_batch(Records::new(&[rec]).with_keys(&["k"])?)?;
    Ok(cols.iter().map(enc::tensor).collect())
}

fn to_number(input: &J) -> Result<Vec<J>> {
    let s = Bytes::from(unhex(input["s"].as_str().unwrap()));
    let t = feedstock::Tensor::vector(vec![s]);
    let out =
        feedstock::decode::raw::string_to_number(&t, dtype(&input["dtype"]))?;
    Ok(vec![enc::tensor(&out)])
}

/// A list of spec values (ints, {"f": f32 bits}, {"b": hex}) as a tensor.
fn values(dt: DType, shape: Vec<usize>, v: &[J]) -> Result<Tensor> {
    match dt {
        DType::I64 => Tensor::new(
            shape,
            v.iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>(),
        ),
        DType::F32 => Tensor::new(
            shape,
            v.iter()
                .map(|x| f32::from_bits(x["f"].as_u64().unwrap() as u32))
                .collect::<Vec<_>>(),
        ),
        _ => Tensor::new(
            shape,
            v.iter()
                .map(|x| Bytes::from(unhex(x["b"].as_str().unwrap())))
                .collect::<Vec<_>>(),
        ),
    }
}

fn usizes(j: &J) -> Vec<usize> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

fn example(input: &J, batch: bool) -> Result<Vec<J>> {
    let spec = spec_of(&input["spec"])?;
    let recs: Vec<Bytes> = input["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Bytes::from(unhex(r.as_str().unwrap())))
        .collect();
    let parsed = if batch {
        parse_example(&recs, &spec)?
    } else {
        parse_single_example(&recs[0], &spec, "")?
    };
    Ok(parsed.values().iter().map(enc::value).collect())
}

fn sequence(input: &J) -> Result<Vec<J>> {
    let ctx = spec_of(&input["context"])?;
    let seq = spec_of(&input["sequence"])?;
    let rec = Bytes::from(unhex(input["record"].as_str().unwrap()));
    let out = parse_single_sequence_example(&rec, &ctx, &seq, "")?;
    let (c, s) = (&out.context, &out.feature_lists);
    Ok(c.values().iter().chain(s.values()).map(enc::value).collect())
}

fn spec_of(list: &J) -> Result<FeatureSpec> {
    let mut b = FeatureSpec::builder();
    for f in list.as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let dt = dtype(&f["dtype"]);
        match f["kind"].as_str().unwrap() {
            "fixed" => {
                let shape = usizes(&f["shape"]);
                match f["default"].as_array() {
                    Some(d) => {
                        let t = values(dt, shape.clone(), d)?;
                        b.fixed_with_default(name, dt, shape, t)
                    }
                    None => b.fixed(name, dt, shape),
                };
            }
            "varlen" => {
                b.var_len(name, dt);
            }
            "fixedseq" => {
                let shape = usizes(&f["shape"]);
                let d = if f["default"].is_null() {
                    None
                } else {
                    Some(values(dt, vec![], std::slice::from_ref(&f["default"]))?)
                };
                let allow = f["allow_missing"].as_bool().unwrap_or(true);
                let mut fs = FixedSequence::new(dt, shape).allow_missing(allow);
                if let Some(d) = d {
                    fs = fs.default_value(d);
                }
                b.fixed_sequence(name, fs);
            }
            _ => {
                let keys: Vec<String> = f["index_keys"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_str().unwrap().to_string())
                    .collect();
                b.sparse(
                    name,
                    Sparse::new(
                        keys,
                        f["value_key"].as_str().unwrap(),
                        dt,
                        usizes(&f["size"]),
                    ),
                );
            }
        }
    }
    b.build()
}

fn compression(input: &J) -> Compression {
    match input["compression"].as_str().unwrap() {
        "GZIP" => Compression::Gzip,
        "ZLIB" => Compression::Zlib,
        _ => Compression::None,
    }
}

/// A filename queue holding one file, then closed.
struct One(std::sync::Mutex<Option<String>>);

impl WorkQueue for One {
    fn next_work(&self) -> Result<String> {
        self.0
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| Error::out_of_range("filename queue is closed"))
    }
}

fn read_all(reader: Reader, input: &J) -> Result<Vec<J>> {
    let work = One(std::sync::Mutex::new(Some(
        input["path"].as_str().unwrap().to_string(),
    )));
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    loop {
        match reader.read(&work) {
            Ok(r) => {
                keys.push(Bytes::from(r.key.into_bytes()));
                values.push(r.value);
            }
            Err(e) if e.is_out_of_range() => break,
            Err(e) => return Err(e),
        }
    }
    Ok(vec![
        enc::tensor(&Tensor::vector(keys)),
        enc::tensor(&Tensor::vector(values)),
    ])
}

const JOIN: std::time::Duration = std::time::Duration::from_secs(20);

fn batch_case(input: &J) -> Result<Vec<J>> {
    use feedstock::coord::{Coordinator, Pipeline};
    use feedstock::input::batch;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    let examples: VecDeque<Vec<i64>> = input["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        })
        .collect();
    let pad = input["pad"].as_bool().unwrap();
    let width = input["width"].as_u64().unwrap() as usize;
    let left = Arc::new(Mutex::new(examples));
    let mut pipeline = Pipeline::new();
    let next = move || -> Result<Vec<feedstock::Value>> {
        match left.lock().unwrap().pop_front() {
            Some(e) => Ok(vec![Tensor::vector(e).into()]),
            None => Err(Error::out_of_range("no more examples")),
        }
    };
    let mut b = batch(&mut pipeline, next);
    b.dtypes([DType::I64])
        .batch_size(input["batch_size"].as_u64().unwrap() as usize)
        .num_threads(1)
        .allow_smaller_final_batch(input["small"].as_bool().unwrap());
    if pad {
        b.shapes([vec![None]]).dynamic_pad(true);
    } else {
        b.shapes([vec![Some(width)]]);
    }
    let batches = b.build()?;
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut out = Vec::new();
    let res = loop {
        match batches.next_batch_timeout(JOIN) {
            Ok(batch) => out.push(enc::value(&batch.components()[0])),
            Err(e) if e.is_out_of_range() => break Ok(out),
            Err(e) => break Err(e),
        }
    };
    coord.request_stop();
    coord.join(threads, JOIN)?;
    res
}

fn producer_case(input: &J) -> Result<Vec<J>> {
    use feedstock::coord::{Coordinator, Pipeline};
    use feedstock::input::string_input_producer;

    let strings: Vec<String> = input["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let mut pipeline = Pipeline::new();
    let q = string_input_producer(&mut pipeline, strings)
        .num_epochs(input["epochs"].as_u64().unwrap())
        .shuffle(false)
        .build()?;
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut got = Vec::new();
    while let Ok(s) = q.next_work() {
        got.push(Bytes::from(s.into_bytes()));
    }
    coord.join(threads, JOIN)?;
    Ok(vec![enc::tensor(&Tensor::vector(got))])
}
