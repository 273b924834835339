//! The files a subcommand names: local paths and object-store URLs alike,
//! through the library's file seam.

use std::io::Read;
use std::path::PathBuf;

use feedstock::io::fs::{default_fs, FileSystem};

/// The files `args` name, in order. An argument with a glob wildcard that
/// is a URL, or that names no local file, is expanded by listing (the
/// shell cannot expand `s3://bucket/train-*`); others are kept as given.
pub(crate) fn expand(args: &[PathBuf]) -> feedstock::Result<Vec<String>> {
    let fs = default_fs();
    let mut out = Vec::new();
    for a in args {
        let s = a.to_string_lossy().into_owned();
        let wild = s.contains(['*', '?', '[']);
        if wild && (s.contains("://") || !a.exists()) {
            out.extend(fs.glob(&s)?);
        } else {
            out.push(s);
        }
    }
    Ok(out)
}

/// Opens `path`, a local path or a URL, for reading.
pub(crate) fn open(path: &str) -> feedstock::Result<Box<dyn Read + Send>> {
    default_fs().open(path)
}

/// The file system behind [`open`], for readers that take one.
pub(crate) fn fs() -> std::sync::Arc<dyn FileSystem> {
    default_fs()
}
