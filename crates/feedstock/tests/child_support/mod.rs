//! Runs one test of this test binary as a child process, to be killed
//! (SIGKILL) part-way: how the resume tests show that a fresh process
//! continues from a checkpoint on disk.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs the test `test` of this binary with `env` set to `dir`; kills it
/// once it has printed `kill_after` lines marked `marker`, if given.
/// Returns the text after the marker of every such line it printed.
pub fn run_child(
    test: &str,
    env: &str,
    dir: &Path,
    marker: &str,
    kill_after: Option<usize>,
) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(env, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        // The test harness may print its own words before the first
        // line, on the same line: look for the marker anywhere.
        if let Some((_, rec)) = line.split_once(marker) {
            lines.push(rec.trim_end().to_owned());
            // The child blocks once the pipe is full, so it is still
            // running (far from its end) when it is killed.
            if Some(lines.len()) == kill_after {
                child.kill().unwrap();
            }
        }
        line.clear();
    }
    let status = child.wait().unwrap();
    assert_eq!(status.success(), kill_after.is_none(), "{status:?}");
    lines
}
