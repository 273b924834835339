//! Any bytes, decoded as a `tf.train.Example` and a `SequenceExample` and
//! printed as `feedstock cat` prints them: no panic, and the JSON printed
//! is valid JSON.

#![no_main]

use feedstock::proto::{Example, SequenceExample};
use libfuzzer_sys::fuzz_target;
use prost::Message;

// The CLI's canonical-JSON printer and record classifier, compiled in
// from the binary crate (which has no library to link against).
#[allow(dead_code)]
#[path = "../../crates/feedstock-cli/src/json.rs"]
mod json;
#[allow(dead_code)]
#[path = "../../crates/feedstock-cli/src/payload.rs"]
mod payload;

fn check_json<T: serde::Serialize>(v: &T) {
    let mut out = Vec::new();
    json::to_writer(&mut out, v).expect("printing never fails");
    serde_json::from_slice::<serde_json::Value>(&out).expect("valid JSON");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(ex) = Example::decode(data) {
        check_json(&json::ExampleJson(&ex));
        // Decoding what we encode gives the same message back. Compared
        // as encoded bytes, not with `==`: a NaN float is not equal to
        // itself, but its bit pattern survives the round trip.
        let once = ex.encode_to_vec();
        let twice = Example::decode(&once[..]).unwrap().encode_to_vec();
        assert_eq!(once, twice);
    }
    if let Ok(se) = SequenceExample::decode(data) {
        check_json(&json::SequenceExampleJson(&se));
    }
    let (_, binary) = payload::classify_keeping(data, payload::Mode::Auto);
    check_json(&json::BinaryKeysJson(&binary));
    for mode in [payload::Mode::Auto, payload::Mode::Sequence] {
        match payload::classify(data, mode) {
            payload::Payload::Example(ex) => {
                check_json(&json::ExampleJson(&ex))
            }
            payload::Payload::SequenceExample(se) => {
                check_json(&json::SequenceExampleJson(&se))
            }
            payload::Payload::Raw => {}
        }
    }
});
