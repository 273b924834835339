//! Tensors to the harness's JSON encoding (floats as bit patterns).

use bytes::Bytes;
use feedstock::{Data, SparseTensor, Tensor, Value};
use serde_json::{json, Value as J};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub fn tensor(t: &Tensor) -> J {
    let (dt, v): (&str, Vec<J>) = match t.data() {
        Data::Bool(v) => ("bool", v.iter().map(|&x| json!(x as u8)).collect()),
        Data::U8(v) => ("u8", v.iter().map(|&x| json!(x)).collect()),
        Data::I8(v) => ("i8", v.iter().map(|&x| json!(x)).collect()),
        Data::U16(v) => ("u16", v.iter().map(|&x| json!(x)).collect()),
        Data::I16(v) => ("i16", v.iter().map(|&x| json!(x)).collect()),
        Data::U32(v) => ("u32", v.iter().map(|&x| json!(x)).collect()),
        Data::I32(v) => ("i32", v.iter().map(|&x| json!(x)).collect()),
        Data::U64(v) => ("u64", v.iter().map(|&x| json!(x)).collect()),
        Data::I64(v) => ("i64", v.iter().map(|&x| json!(x)).collect()),
        Data::F32(v) => {
            ("f32", v.iter().map(|&x| json!(x.to_bits())).collect())
        }
        Data::F64(v) => {
            ("f64", v.iter().map(|&x| json!(x.to_bits())).collect())
        }
        Data::String(v) => (
            "string",
            v.iter().map(|x: &Bytes| json!(hex(x))).collect(),
        ),
        _ => ("unknown", Vec::new()),
    };
    json!({"dtype": dt, "shape": t.dims(), "v": v})
}

pub fn sparse(s: &SparseTensor) -> J {
    json!({"sparse": true, "indices": tensor(s.indices()),
        "values": tensor(s.values()), "dense_shape": s.dims()})
}

pub fn value(v: &Value) -> J {
    match v {
        Value::Dense(t) => tensor(t),
        Value::Sparse(s) => sparse(s),
    }
}

/// The harness encoding back to a tensor (u8 and f32 only: what the
/// image cases send).
pub fn decode(j: &J) -> Tensor {
    let shape: Vec<usize> = j["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    let v = j["v"].as_array().unwrap();
    match j["dtype"].as_str().unwrap() {
        "u8" => Tensor::new(
            shape,
            v.iter().map(|x| x.as_u64().unwrap() as u8).collect::<Vec<_>>(),
        ),
        _ => Tensor::new(
            shape,
            v.iter()
                .map(|x| f32::from_bits(x.as_u64().unwrap() as u32))
                .collect::<Vec<_>>(),
        ),
    }
    .unwrap()
}
