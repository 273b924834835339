//! Reads harness cases (JSON lines) on stdin, runs each with feedstock and
//! writes one JSON line per case on stdout: `{"id", "ok", "out"}` or
//! `{"id", "ok": false, "kind", "msg"}`, in the encoding of tfcommon.py.

mod cases;
mod enc;

use std::io::{BufRead, Write};

use serde_json::{json, Value as J};

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("read stdin");
        let case: J = serde_json::from_str(&line).expect("case json");
        let id = case["id"].clone();
        let area = case["area"].as_str().unwrap_or("").to_string();
        let input = &case["input"];
        let res = std::panic::catch_unwind(|| cases::run(&area, input));
        let ans = match res {
            Ok(Ok(outv)) => json!({"id": id, "ok": true, "out": outv}),
            Ok(Err(e)) => json!({"id": id, "ok": false,
                "kind": e.kind().as_str(), "msg": e.to_string()}),
            Err(_) => json!({"id": id, "ok": false, "kind": "PANIC",
                "msg": "panic"}),
        };
        writeln!(out, "{ans}").unwrap();
    }
}
