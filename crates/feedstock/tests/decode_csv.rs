//! decode_csv: table-driven cases for every option and error, the golden
//! files TensorFlow decoded, and the builder's validation.

use std::path::PathBuf;

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::Records;
use feedstock::{DType, Kind, Tensor};
use serde_json::Value as Json;

/// An expected decoded value.
#[derive(Debug, Clone, Copy)]
enum V {
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    S(&'static str),
}

/// The options of one case.
#[derive(Clone, Copy)]
struct Opts {
    delim: u8,
    quote: bool,
    na: Option<&'static str>,
    select: Option<&'static [usize]>,
}

const DEFAULT: Opts = Opts {
    delim: b',',
    quote: true,
    na: None,
    select: None,
};

enum Expect {
    Ok(Vec<V>),
    /// The error's column and a piece of its message.
    Err(usize, &'static str),
}

struct Case {
    name: &'static str,
    record: &'static str,
    defaults: Vec<RecordDefault>,
    opts: Opts,
    expect: Expect,
}

fn req(d: DType) -> RecordDefault {
    RecordDefault::required(d).unwrap()
}

fn ok(
    name: &'static str,
    record: &'static str,
    defaults: Vec<RecordDefault>,
    opts: Opts,
    want: Vec<V>,
) -> Case {
    Case {
        name,
        record,
        defaults,
        opts,
        expect: Expect::Ok(want),
    }
}

fn err(
    name: &'static str,
    record: &'static str,
    defaults: Vec<RecordDefault>,
    opts: Opts,
    column: usize,
    msg: &'static str,
) -> Case {
    Case {
        name,
        record,
        defaults,
        opts,
        expect: Expect::Err(column, msg),
    }
}

fn with_na(na: &'static str) -> Opts {
    Opts {
        na: Some(na),
        ..DEFAULT
    }
}

fn with_delim(delim: u8) -> Opts {
    Opts { delim, ..DEFAULT }
}

fn no_quote() -> Opts {
    Opts {
        quote: false,
        ..DEFAULT
    }
}

fn select(cols: &'static [usize]) -> Opts {
    Opts {
        select: Some(cols),
        ..DEFAULT
    }
}

fn cases() -> Vec<Case> {
    use DType::*;
    use RecordDefault as D;
    vec![
        // --- values of every dtype ---
        ok(
            "ints",
            "1,-2",
            vec![D::i32(0), D::i64(0)],
            DEFAULT,
            vec![V::I32(1), V::I64(-2)],
        ),
        ok(
            "floats",
            "1.5,-2.25",
            vec![D::f32(0.), D::f64(0.)],
            DEFAULT,
            vec![V::F32(1.5), V::F64(-2.25)],
        ),
        ok(
            "strings",
            "hello,world",
            vec![req(String), req(String)],
            DEFAULT,
            vec![V::S("hello"), V::S("world")],
        ),
        ok(
            "single column",
            "5",
            vec![req(I64)],
            DEFAULT,
            vec![V::I64(5)],
        ),
        ok("plus sign", "+7", vec![req(I32)], DEFAULT, vec![V::I32(7)]),
        ok(
            "int whitespace ignored",
            " 42\t",
            vec![req(I32)],
            DEFAULT,
            vec![V::I32(42)],
        ),
        ok(
            "string whitespace kept",
            " a ,b",
            vec![req(String), req(String)],
            DEFAULT,
            vec![V::S(" a "), V::S("b")],
        ),
        ok(
            "int32 extremes",
            "-2147483648,2147483647",
            vec![req(I32), req(I32)],
            DEFAULT,
            vec![V::I32(i32::MIN), V::I32(i32::MAX)],
        ),
        ok(
            "int64 extremes",
            "-9223372036854775808,9223372036854775807",
            vec![req(I64), req(I64)],
            DEFAULT,
            vec![V::I64(i64::MIN), V::I64(i64::MAX)],
        ),
        ok(
            "float exponent",
            "1e3,2.5E-1",
            vec![req(F32), req(F64)],
            DEFAULT,
            vec![V::F32(1000.0), V::F64(0.25)],
        ),
        ok(
            "float32 overflow is +inf",
            "1e39",
            vec![req(F32)],
            DEFAULT,
            vec![V::F32(f32::INFINITY)],
        ),
        ok(
            "float32 overflow is -inf",
            "-1e39",
            vec![req(F32)],
            DEFAULT,
            vec![V::F32(f32::NEG_INFINITY)],
        ),
        ok(
            "float64 overflow is +inf",
            "1e309",
            vec![req(F64)],
            DEFAULT,
            vec![V::F64(f64::INFINITY)],
        ),
        ok(
            "float underflow is zero",
            "1e-50",
            vec![req(F32)],
            DEFAULT,
            vec![V::F32(0.0)],
        ),
        ok(
            "float without leading or trailing digits",
            ".5,5.",
            vec![req(F32), req(F64)],
            DEFAULT,
            vec![V::F32(0.5), V::F64(5.0)],
        ),
        ok(
            "inf and nan words",
            "inf,-Infinity,NaN",
            vec![req(F32), req(F64), req(F64)],
            DEFAULT,
            vec![
                V::F32(f32::INFINITY),
                V::F64(f64::NEG_INFINITY),
                V::F64(f64::NAN),
            ],
        ),
        // --- defaults and na_value ---
        ok(
            "empty field takes default",
            ",5",
            vec![D::i32(7), D::i32(0)],
            DEFAULT,
            vec![V::I32(7), V::I32(5)],
        ),
        ok(
            "trailing delimiter is an empty last field",
            "5,",
            vec![D::i64(0), D::f64(9.5)],
            DEFAULT,
            vec![V::I64(5), V::F64(9.5)],
        ),
        ok(
            "all fields empty",
            ",,",
            vec![D::i32(1), D::string("s"), D::f32(2.)],
            DEFAULT,
            vec![V::I32(1), V::S("s"), V::F32(2.0)],
        ),
        ok(
            "na_value takes default",
            "NA,3",
            vec![D::i32(-1), req(I32)],
            with_na("NA"),
            vec![V::I32(-1), V::I32(3)],
        ),
        ok(
            "quoted na_value takes default",
            "\"NA\",3",
            vec![D::f64(-1.), req(I32)],
            with_na("NA"),
            vec![V::F64(-1.0), V::I32(3)],
        ),
        ok(
            "na_value in a string column",
            "NA",
            vec![D::string("none")],
            with_na("NA"),
            vec![V::S("none")],
        ),
        ok(
            "text near na_value is parsed",
            "NAN",
            vec![D::f32(0.)],
            with_na("NA"),
            vec![V::F32(f32::NAN)],
        ),
        ok(
            "empty na_value changes nothing",
            ",x",
            vec![D::i32(3), req(String)],
            with_na(""),
            vec![V::I32(3), V::S("x")],
        ),
        // --- quoting ---
        ok(
            "quoted field holds the delimiter",
            "\"a,b\",c",
            vec![req(String), req(String)],
            DEFAULT,
            vec![V::S("a,b"), V::S("c")],
        ),
        ok(
            "doubled quotes are one quote",
            "\"The \"\"Old\"\" Mill\",1",
            vec![req(String), req(I32)],
            DEFAULT,
            vec![V::S("The \"Old\" Mill"), V::I32(1)],
        ),
        ok(
            "quoted field holds a newline",
            "\"line1\r\nline2\",x",
            vec![req(String), req(String)],
            DEFAULT,
            vec![V::S("line1\r\nline2"), V::S("x")],
        ),
        ok(
            "empty quoted field takes default",
            "\"\",1",
            vec![D::string("dflt"), req(I64)],
            DEFAULT,
            vec![V::S("dflt"), V::I64(1)],
        ),
        ok(
            "quoted number",
            "\"958\"",
            vec![req(F32)],
            DEFAULT,
            vec![V::F32(958.0)],
        ),
        ok(
            "quoted field then trailing delimiter",
            "\"a\",",
            vec![req(String), D::i32(4)],
            DEFAULT,
            vec![V::S("a"), V::I32(4)],
        ),
        ok(
            "only a quote pair",
            "\"\"\"\"",
            vec![req(String)],
            DEFAULT,
            vec![V::S("\"")],
        ),
        ok(
            "quotes are ordinary without use_quote_delim",
            "sensor-\"c\",\"1",
            vec![req(String), req(String)],
            no_quote(),
            vec![V::S("sensor-\"c\""), V::S("\"1")],
        ),
        ok(
            "delimiter inside quotes splits without use_quote_delim",
            "\"a,b\"",
            vec![req(String), req(String)],
            no_quote(),
            vec![V::S("\"a"), V::S("b\"")],
        ),
        // --- delimiters and line endings ---
        ok(
            "tab delimiter",
            "a\t1\t",
            vec![req(String), req(I32), D::i32(8)],
            with_delim(b'\t'),
            vec![V::S("a"), V::I32(1), V::I32(8)],
        ),
        ok(
            "pipe delimiter keeps commas",
            "1,5|x",
            vec![req(String), req(String)],
            with_delim(b'|'),
            vec![V::S("1,5"), V::S("x")],
        ),
        ok(
            "CR and LF at a field start are skipped",
            "1,\r\n2",
            vec![req(I32), req(I32)],
            DEFAULT,
            vec![V::I32(1), V::I32(2)],
        ),
        ok(
            "CR and LF at the record start are skipped",
            "\r\n\"a\",b",
            vec![req(String), req(String)],
            DEFAULT,
            vec![V::S("a"), V::S("b")],
        ),
        // --- select_cols ---
        ok(
            "select_cols picks columns",
            "1,x,3",
            vec![req(I32), req(I32)],
            select(&[0, 2]),
            vec![V::I32(1), V::I32(3)],
        ),
        ok(
            "select_cols ignores columns after the last",
            "a,2,junk\"q,\"unclosed",
            vec![req(I64)],
            select(&[1]),
            vec![V::I64(2)],
        ),
        ok(
            "select_cols with an empty last field",
            "1,2,",
            vec![req(I32), D::i32(6)],
            select(&[0, 2]),
            vec![V::I32(1), V::I32(6)],
        ),
        ok(
            "select_cols with quoted fields",
            "\"x,y\",\"q\"\"\",3",
            vec![req(String), req(I32)],
            select(&[1, 2]),
            vec![V::S("q\""), V::I32(3)],
        ),
        // --- errors ---
        err(
            "too few fields",
            "1",
            vec![req(I32), req(I32)],
            DEFAULT,
            1,
            "expected 2 fields but the record has 1",
        ),
        err(
            "too many fields",
            "1,2,3",
            vec![req(I32), req(I32)],
            DEFAULT,
            2,
            "expected 2 fields but the record has 3",
        ),
        err(
            "empty record has no fields",
            "",
            vec![D::i32(0)],
            DEFAULT,
            0,
            "expected 1 fields but the record has 0",
        ),
        err(
            "record of only a line ending",
            "\r\n",
            vec![D::i32(0)],
            DEFAULT,
            0,
            "record has 0",
        ),
        err(
            "select_cols beyond the record",
            "1,2",
            vec![req(I32), req(I32)],
            select(&[0, 3]),
            3,
            "expected 2 fields but the record has 1",
        ),
        err(
            "int32 junk",
            "abc",
            vec![req(I32)],
            DEFAULT,
            0,
            "not a valid int32: \"abc\"",
        ),
        err(
            "int64 with a fraction",
            "1,1.5",
            vec![req(I64), req(I64)],
            DEFAULT,
            1,
            "not a valid int64: \"1.5\"",
        ),
        err(
            "int32 overflow",
            "2147483648",
            vec![req(I32)],
            DEFAULT,
            0,
            "not a valid int32",
        ),
        err(
            "int32 underflow",
            "0,-2147483649",
            vec![req(I32), req(I32)],
            DEFAULT,
            1,
            "not a valid int32",
        ),
        err(
            "int64 overflow",
            "9223372036854775808",
            vec![req(I64)],
            DEFAULT,
            0,
            "not a valid int64",
        ),
        err(
            "int of only whitespace",
            "  ",
            vec![D::i32(0)],
            DEFAULT,
            0,
            "not a valid int32",
        ),
        err(
            "float junk",
            "1.2.3",
            vec![req(F32)],
            DEFAULT,
            0,
            "not a valid float32: \"1.2.3\"",
        ),
        err(
            // TensorFlow 2.21 rejects "0x" too (it accepts "0x10").
            "hex float without digits rejected",
            "0x",
            vec![req(F64)],
            DEFAULT,
            0,
            "not a valid float64",
        ),
        err(
            "decimal comma rejected",
            "1,5",
            vec![req(F32)],
            with_delim(b';'),
            0,
            "not a valid float32: \"1,5\"",
        ),
        err(
            "escaped quote in a number",
            "\"1\"\"\",2",
            vec![req(I32), req(I32)],
            DEFAULT,
            0,
            "not a valid int32: \"1\\\"\"",
        ),
        err(
            "required field empty",
            "1,",
            vec![req(I32), req(F32)],
            DEFAULT,
            1,
            "required field is missing",
        ),
        err(
            "required field is na_value",
            "?,1",
            vec![req(String), req(I32)],
            with_na("?"),
            0,
            "required field is missing",
        ),
        err(
            "quote in wrong place",
            "\"a\"b,1",
            vec![req(String), req(I32)],
            DEFAULT,
            0,
            "quote in wrong place",
        ),
        err(
            "unescaped quote inside quotes",
            "1,\"a\"b\"",
            vec![req(I32), req(String)],
            DEFAULT,
            1,
            "quote in wrong place",
        ),
        err(
            "unterminated quote",
            "1,\"abc",
            vec![req(I32), req(String)],
            DEFAULT,
            1,
            "no closing quote",
        ),
        err(
            "unterminated after escaped quote",
            "\"ab\"\"",
            vec![req(String)],
            DEFAULT,
            0,
            "no closing quote",
        ),
        err(
            "quote inside an unquoted field",
            "ab\"c,1",
            vec![req(String), req(I32)],
            DEFAULT,
            0,
            "unquoted field contains a quote",
        ),
        err(
            "trailing CR after a field",
            "1,2\r",
            vec![req(I32), req(I32)],
            DEFAULT,
            1,
            "unquoted field contains a carriage return",
        ),
        err(
            "LF inside an unquoted field",
            "1,a\nb",
            vec![req(I32), req(String)],
            no_quote(),
            1,
            "unquoted field contains a line feed",
        ),
        err(
            "bad column before the selected one",
            "a\"b,1",
            vec![req(I32)],
            select(&[1]),
            0,
            "unquoted field contains a quote",
        ),
    ]
}

fn decoder(case: &Case) -> CsvDecoder {
    let mut b = CsvDecoder::builder(case.defaults.clone());
    b.field_delim(case.opts.delim)
        .use_quote_delim(case.opts.quote);
    if let Some(na) = case.opts.na {
        b.na_value(na);
    }
    if let Some(cols) = case.opts.select {
        b.select_cols(cols);
    }
    b.build().unwrap()
}

fn check_value(t: &Tensor, row: usize, want: V, what: &str) {
    match want {
        V::I32(v) => {
            assert_eq!(t.as_slice::<i32>().unwrap()[row], v, "{what}")
        }
        V::I64(v) => {
            assert_eq!(t.as_slice::<i64>().unwrap()[row], v, "{what}")
        }
        V::F32(v) => {
            let got = t.as_slice::<f32>().unwrap()[row];
            assert!(
                got.to_bits() == v.to_bits() || (got.is_nan() && v.is_nan()),
                "{what}: {got} != {v}"
            );
        }
        V::F64(v) => {
            let got = t.as_slice::<f64>().unwrap()[row];
            assert!(
                got.to_bits() == v.to_bits() || (got.is_nan() && v.is_nan()),
                "{what}: {got} != {v}"
            );
        }
        V::S(v) => {
            assert_eq!(t.as_slice::<Bytes>().unwrap()[row], v, "{what}")
        }
    }
}

/// Runs every case through `decode` and through `decode_batch` (as the
/// second record of a batch whose first record is fine, so the batch path
/// must name the right key).
#[test]
fn table_cases_decode_alike_one_by_one_and_in_batches() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    for case in &cases {
        let dec = decoder(case);
        let rec = Bytes::from_static(case.record.as_bytes());
        let single = dec.decode(&rec, "t.csv:7");
        match &case.expect {
            Expect::Ok(want) => {
                let got = single.unwrap_or_else(|e| {
                    panic!("{}: unexpected error {e}", case.name)
                });
                assert_eq!(got.len(), want.len(), "{}", case.name);
                for (k, (t, &w)) in got.iter().zip(want).enumerate() {
                    assert_eq!(t.rank(), 0, "{}", case.name);
                    check_value(t, 0, w, &format!("{} col {k}", case.name));
                }
                let pair = [rec.clone(), rec.clone()];
                let batch = dec
                    .decode_batch(
                        Records::new(&pair).with_keys(&["a", "b"]).unwrap(),
                    )
                    .unwrap();
                for (k, (t, &w)) in batch.iter().zip(want).enumerate() {
                    assert_eq!(t.dims(), &[2], "{}", case.name);
                    for row in 0..2 {
                        let what = format!("{} batch col {k}", case.name);
                        check_value(t, row, w, &what);
                    }
                }
            }
            Expect::Err(column, msg) => {
                let e = single.expect_err(case.name);
                assert_eq!(e.kind(), Kind::InvalidArgument, "{}", case.name);
                assert_eq!(e.key(), Some("t.csv:7"), "{}", case.name);
                let col = format!("column {column}");
                assert_eq!(
                    e.field(),
                    Some(col.as_str()),
                    "{}: {e}",
                    case.name
                );
                let text = e.to_string();
                assert!(text.contains(msg), "{}: {text}", case.name);
                assert!(text.contains("key t.csv:7"), "{}", case.name);
                assert!(text.contains(&col), "{}: {text}", case.name);

                let good = good_record(case);
                let pair = [good, rec.clone()];
                let keys = ["ok.csv:1", "bad.csv:2"];
                let e = dec
                    .decode_batch(
                        Records::new(&pair).with_keys(&keys).unwrap(),
                    )
                    .expect_err(case.name);
                assert_eq!(e.key(), Some("bad.csv:2"), "{}", case.name);
                assert_eq!(e.field(), Some(col.as_str()), "{}", case.name);
            }
        }
    }
}

/// A record every error case's decoder accepts: each selected column gets
/// a value of its dtype.
fn good_record(case: &Case) -> Bytes {
    let ncols = case
        .opts
        .select
        .map_or(case.defaults.len(), |s| s[s.len() - 1] + 1);
    let fields: Vec<&str> = (0..ncols).map(|_| "1").collect();
    let delim = (case.opts.delim as char).to_string();
    Bytes::from(fields.join(&delim))
}

#[test]
fn batch_errors_without_keys_name_the_record_index() {
    let dec = CsvDecoder::new(vec![RecordDefault::i32(0)]).unwrap();
    let recs = [Bytes::from_static(b"1"), Bytes::from_static(b"x")];
    let e = dec.decode_batch(&recs).unwrap_err();
    assert_eq!(e.key(), None);
    assert!(e.to_string().contains("in record 1"), "{e}");
    assert_eq!(e.field(), Some("column 0"));
    let e = Records::new(&recs)
        .with_keys(&["only one key"])
        .unwrap_err();
    assert!(e.to_string().contains("1 keys given for 2 records"), "{e}");
}

#[test]
fn empty_batch_gives_empty_columns() {
    let dec = CsvDecoder::new(vec![
        RecordDefault::i32(0),
        RecordDefault::string(""),
    ])
    .unwrap();
    let cols = dec.decode_batch(Records::new(&[])).unwrap();
    assert_eq!(cols.len(), 2);
    assert_eq!(cols[0].dims(), &[0]);
    assert_eq!(cols[1].dtype(), DType::String);
}

#[test]
fn unquoted_strings_share_the_record_buffer() {
    let dec = CsvDecoder::new(vec![
        RecordDefault::string(""),
        RecordDefault::string(""),
    ])
    .unwrap();
    let rec = Bytes::from_static(b"abc,\"d\"\"e\"");
    let out = dec.decode(&rec, "k").unwrap();
    let a = out[0].scalar_value::<Bytes>().unwrap();
    assert_eq!(a.as_ptr(), rec.as_ptr());
    let b = out[1].scalar_value::<Bytes>().unwrap();
    assert_eq!(b, "d\"e");
}

#[test]
fn builder_rejects_bad_configurations() {
    let two = || vec![RecordDefault::i32(0), RecordDefault::i32(0)];
    let cases: Vec<(&str, feedstock::Result<CsvDecoder>)> = vec![
        ("no defaults", CsvDecoder::new(vec![])),
        (
            "select_cols length",
            CsvDecoder::builder(two()).select_cols([1]).build(),
        ),
        (
            "select_cols order",
            CsvDecoder::builder(two()).select_cols([2, 1]).build(),
        ),
        (
            "select_cols repeat",
            CsvDecoder::builder(two()).select_cols([1, 1]).build(),
        ),
        (
            "quote delimiter",
            CsvDecoder::builder(two()).field_delim(b'"').build(),
        ),
        (
            "newline delimiter",
            CsvDecoder::builder(two()).field_delim(b'\n').build(),
        ),
    ];
    for (name, r) in cases {
        assert_eq!(r.unwrap_err().kind(), Kind::InvalidArgument, "{name}");
    }
    // A quote is an ordinary delimiter once quoting is off.
    let dec = CsvDecoder::builder(two())
        .field_delim(b'"')
        .use_quote_delim(false)
        .build()
        .unwrap();
    let out = dec.decode(&Bytes::from_static(b"1\"2"), "k").unwrap();
    assert_eq!(out[1].scalar_value::<i32>().unwrap(), 2);
}

#[test]
fn defaults_from_tensors_follow_tensorflow() {
    let d = RecordDefault::from_tensor(&Tensor::vector(vec![3i64])).unwrap();
    assert_eq!(d, RecordDefault::i64(3));
    let r = RecordDefault::from_tensor(&Tensor::vector(Vec::<f32>::new()))
        .unwrap();
    assert!(r.is_required());
    assert_eq!(r.dtype(), DType::F32);
    let two = RecordDefault::from_tensor(&Tensor::vector(vec![1i32, 2]));
    assert!(two.unwrap_err().to_string().contains("at most one element"));
    let bad = RecordDefault::from_tensor(&Tensor::scalar(1u8));
    assert!(bad.unwrap_err().to_string().contains("uint8"));
    assert_eq!(
        RecordDefault::required(DType::Bool).unwrap_err().kind(),
        Kind::InvalidArgument
    );
}

// ---------------------------------------------------------------------
// Golden files: lines and columns as TensorFlow produced them.

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden")
        .join(name)
}

fn default_from_json(d: &Json) -> RecordDefault {
    let dtype = DType::from_name(d["dtype"].as_str().unwrap()).unwrap();
    if d["required"].as_bool().unwrap() {
        return RecordDefault::required(dtype).unwrap();
    }
    let v = &d["default"];
    match dtype {
        DType::I32 => RecordDefault::i32(v.as_i64().unwrap() as i32),
        DType::I64 => RecordDefault::i64(v.as_i64().unwrap()),
        DType::F32 => RecordDefault::f32(v.as_f64().unwrap() as f32),
        DType::F64 => RecordDefault::f64(v.as_f64().unwrap()),
        DType::String => RecordDefault::string(v.as_str().unwrap().to_owned()),
        other => panic!("unexpected dtype {other}"),
    }
}

/// Splits `text` into lines as TextLineReader does (dropping `\n` and a
/// `\r` before it), after `skip` header lines, with 1-based line keys.
fn lines(file: &str, text: &[u8], skip: usize) -> Vec<(String, Bytes)> {
    let mut out = Vec::new();
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    for (i, line) in body.split(|&b| b == b'\n').enumerate().skip(skip) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.push((format!("{file}:{}", i + 1), Bytes::copy_from_slice(line)));
    }
    out
}

fn check_golden(file: &str) {
    let side: Json = serde_json::from_slice(
        &std::fs::read(golden(&format!("{file}.json"))).unwrap(),
    )
    .unwrap();
    let text = std::fs::read(golden(file)).unwrap();
    let skip = side["reader"]["TextLineReader"]["skip_header_lines"]
        .as_u64()
        .unwrap() as usize;
    let got_lines = lines(file, &text, skip);
    let want_lines = side["lines"].as_array().unwrap();
    assert_eq!(got_lines.len(), want_lines.len());
    for ((key, line), want) in got_lines.iter().zip(want_lines) {
        assert_eq!(key, want["key"].as_str().unwrap());
        assert_eq!(line, want["line"].as_str().unwrap().as_bytes());
    }

    let cfg = &side["decode_csv"];
    let defaults = cfg["record_defaults"]
        .as_array()
        .unwrap()
        .iter()
        .map(default_from_json)
        .collect();
    let delim = cfg["field_delim"].as_str().unwrap().as_bytes();
    assert_eq!(delim.len(), 1);
    let dec = CsvDecoder::builder(defaults)
        .field_delim(delim[0])
        .use_quote_delim(cfg["use_quote_delim"].as_bool().unwrap())
        .na_value(cfg["na_value"].as_str().unwrap().to_owned())
        .build()
        .unwrap();
    let (keys, recs): (Vec<String>, Vec<Bytes>) =
        got_lines.into_iter().unzip();
    let cols = dec
        .decode_batch(Records::new(&recs).with_keys(&keys).unwrap())
        .unwrap();
    let want_cols = side["columns"].as_array().unwrap();
    assert_eq!(cols.len(), want_cols.len());
    for (k, (t, w)) in cols.iter().zip(want_cols).enumerate() {
        assert_eq!(t.dtype().name(), w["dtype"].as_str().unwrap(), "col {k}");
        let shape: Vec<usize> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(t.dims(), &shape[..], "col {k}");
        let values = w["values"].as_array().unwrap();
        match t.dtype() {
            DType::I32 => {
                let want: Vec<i32> = values
                    .iter()
                    .map(|v| v.as_i64().unwrap() as i32)
                    .collect();
                assert_eq!(t.as_slice::<i32>().unwrap(), &want[..], "col {k}");
            }
            DType::I64 => {
                let want: Vec<i64> =
                    values.iter().map(|v| v.as_i64().unwrap()).collect();
                assert_eq!(t.as_slice::<i64>().unwrap(), &want[..], "col {k}");
            }
            DType::F32 => {
                let bits: Vec<String> = t
                    .as_slice::<f32>()
                    .unwrap()
                    .iter()
                    .map(|f| format!("{:08x}", f.to_bits()))
                    .collect();
                assert_eq!(bits, strings(&w["bits"]), "col {k}");
            }
            DType::F64 => {
                let bits: Vec<String> = t
                    .as_slice::<f64>()
                    .unwrap()
                    .iter()
                    .map(|f| format!("{:016x}", f.to_bits()))
                    .collect();
                assert_eq!(bits, strings(&w["bits"]), "col {k}");
            }
            DType::String => {
                let got: Vec<String> = t
                    .as_slice::<Bytes>()
                    .unwrap()
                    .iter()
                    .map(|b| String::from_utf8(b.to_vec()).unwrap())
                    .collect();
                assert_eq!(got, strings(w["values"].clone()), "col {k}");
            }
            other => panic!("unexpected dtype {other}"),
        }
    }
}

fn strings(v: impl std::borrow::Borrow<Json>) -> Vec<String> {
    v.borrow()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn golden_stations_csv_decodes_as_tensorflow_did() {
    check_golden("stations.csv");
}

#[test]
fn golden_readings_tsv_decodes_as_tensorflow_did() {
    check_golden("readings.tsv");
}
