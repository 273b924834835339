//! The files a subcommand names: local paths and object-store URLs alike.

use std::path::PathBuf;

use feedstock::io::fs::default_fs;

/// The files `args` name, in order. An argument with a glob wildcard that
/// is a URL, or that names no local file, is expanded by listing (the
/// shell cannot expand `s3://bucket/train-*`); others are kept as given.
pub(crate) fn expand(args: &[PathBuf]) -> feedstock::Result<Vec<PathBuf>> {
    let fs = default_fs();
    let mut out = Vec::new();
    for a in args {
        let s = a.to_string_lossy();
        let wild = s.contains(['*', '?', '[']);
        if wild && (s.contains("://") || !a.exists()) {
            out.extend(fs.glob(&s)?.into_iter().map(PathBuf::from));
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// The input files `args` name ([`expand`]ed), refused if standard output
/// is one of them (see [`crate::args::refuse_stdout_as_input`]).
pub(crate) fn inputs(args: &[PathBuf]) -> feedstock::Result<Vec<PathBuf>> {
    let paths = expand(args)?;
    crate::args::refuse_stdout_as_input(&paths)?;
    Ok(paths)
}
