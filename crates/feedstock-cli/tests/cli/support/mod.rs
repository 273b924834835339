//! Helpers the CLI's integration tests share: running the built binary
//! (plainly, or through `sh` under limits or redirections), the golden
//! files and shipped data, reading a run's output, and writing inputs.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::{Example, Feature};
use flate2::{Compress, Crc, FlushCompress};
use prost::Message;
use serde_json::Value;

/// The built `feedstock` binary, as a command without arguments.
pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_feedstock"))
}

/// Runs the binary with `args`, which need not be UTF-8, to its end.
pub(crate) fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    bin().args(args).output().expect("run feedstock")
}

/// Runs the binary with `args` to its end.
pub(crate) fn feedstock(args: &[&str]) -> Output {
    run(args)
}

/// The binary run through `sh -c`: the shell runs `setup` first (when
/// not empty; `ulimit -v 1024`, say), then `exec`s the binary with
/// `args` and the shell redirection `redirect` (`>&-`, say, or empty).
pub(crate) fn sh_command(
    setup: &str,
    redirect: &str,
    args: &[&str],
) -> Command {
    let exec = format!("exec \"$0\" \"$@\" {redirect}");
    let script = if setup.is_empty() {
        exec
    } else {
        format!("{setup} && {exec}")
    };
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_feedstock"))
        .args(args);
    command
}

/// Runs [`sh_command`] to its end.
pub(crate) fn feedstock_sh(
    setup: &str,
    redirect: &str,
    args: &[&str],
) -> Output {
    sh_command(setup, redirect, args)
        .output()
        .expect("run feedstock under sh")
}

/// A golden file (written by TensorFlow) from the library's test data.
pub(crate) fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../feedstock/tests/data/golden")
        .join(name)
}

/// The JSON sidecar of golden file `name`: what TensorFlow wrote in it.
pub(crate) fn sidecar(name: &str) -> Value {
    let text =
        fs::read_to_string(golden(&format!("{name}.json"))).expect("sidecar");
    serde_json::from_str(&text).expect("sidecar JSON")
}

/// The repository's `data` directory (the shipped digits).
pub(crate) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// The shipped digits, `data/digits.csv.gz`.
pub(crate) fn digits() -> PathBuf {
    data_dir().join("digits.csv.gz")
}

/// `p` as a `&str`, for an argument list.
pub(crate) fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// A run's standard output, which must be UTF-8.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A run's standard error, bytes that are not UTF-8 replaced.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The names in `dir`, sorted.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The offset of each record of an uncompressed TFRecord file.
pub(crate) fn offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        out.push(at);
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        at += 16 + len as usize;
    }
    out
}

/// Writes a TFRecord file of `n` Examples with one int64 feature `n`
/// (0 to `n - 1`), compressed as `c`.
pub(crate) fn write_examples(path: &Path, n: i64, c: Compression) {
    let mut w = WriterBuilder::new().compression(c).from_writer(Vec::new());
    for i in 0..n {
        let ex = Example::builder()
            .feature("n", Feature::int64_list([i]))
            .build();
        w.write_record(&ex.encode_to_vec()).unwrap();
    }
    fs::write(path, w.finish().unwrap()).unwrap();
}

/// The CRC of `times` copies of data whose CRC is `unit`, by doubling.
pub(crate) fn repeated_crc(unit: &[u8], times: u64) -> Crc {
    let mut pow = Crc::new();
    pow.update(unit);
    let mut total = Crc::new();
    let mut n = times;
    while n > 0 {
        if n & 1 == 1 {
            total.combine(&pow);
        }
        let mut twice = Crc::new();
        twice.combine(&pow);
        twice.combine(&pow);
        pow = twice;
        n >>= 1;
    }
    total
}

/// Writes a gzip file that inflates to `times` copies of `unit`: the
/// unit is deflated once, ending in a full flush (so the block refers to
/// nothing before it), and that block is written `times` times, then an
/// empty final block and the trailer. A huge input costs next to nothing
/// to make.
pub(crate) fn gzip_repeat(unit: &[u8], times: u64, path: &Path) {
    gzip_parts(&[], unit, times, &[], path);
}

/// A gzip file that inflates to `prefix`, `times` copies of `unit`, then
/// `suffix` (see [`gzip_repeat`]).
pub(crate) fn gzip_parts(
    prefix: &[u8],
    unit: &[u8],
    times: u64,
    suffix: &[u8],
    path: &Path,
) {
    let mut c = Compress::new(flate2::Compression::best(), false);
    let mut head = Vec::with_capacity(prefix.len() + 4096);
    c.compress_vec(prefix, &mut head, FlushCompress::Full)
        .unwrap();
    let mut block = Vec::with_capacity(unit.len() + 4096);
    c.compress_vec(unit, &mut block, FlushCompress::Full)
        .unwrap();
    let total = (prefix.len() + unit.len()) as u64;
    assert_eq!(c.total_in(), total, "one call deflates it all");
    let mut end = Vec::with_capacity(suffix.len() + 4096);
    c.compress_vec(suffix, &mut end, FlushCompress::Finish)
        .unwrap();
    let mut crc = Crc::new();
    crc.update(prefix);
    crc.combine(&repeated_crc(unit, times));
    let mut tail = Crc::new();
    tail.update(suffix);
    crc.combine(&tail);
    let mut f = BufWriter::new(File::create(path).unwrap());
    f.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
        .unwrap();
    f.write_all(&head).unwrap();
    for _ in 0..times {
        f.write_all(&block).unwrap();
    }
    f.write_all(&end).unwrap();
    f.write_all(&crc.sum().to_le_bytes()).unwrap();
    f.write_all(&crc.amount().to_le_bytes()).unwrap();
    f.flush().unwrap();
}
