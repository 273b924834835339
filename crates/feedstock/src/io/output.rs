//! Files being written that appear whole or not at all.
//!
//! [`Output::create`] opens a local path or, with the `object-store`
//! feature, an object-store URL. Bytes written go to the destination;
//! [`Output::commit`] makes the result final. An output dropped without
//! `commit` leaves nothing behind: a remote upload is aborted, a local
//! file removed. The TFRecord writer targets one through
//! [`WriterBuilder::create_output`](crate::io::tfrecord::WriterBuilder::create_output).
//!
//! ```
//! use std::io::Write;
//! use feedstock::io::output::Output;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.bin");
//! let p = path.to_str().unwrap();
//! let mut out = Output::create(p)?;
//! out.write_all(b"abc")?;
//! drop(out); // not committed: nothing stays
//! assert!(!path.exists());
//! let mut out = Output::create(p)?;
//! out.write_all(b"abc")?;
//! out.commit()?;
//! assert_eq!(std::fs::read(&path)?, b"abc");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::error::{Error, Result};

/// A file or object being written; see the [module docs](self).
#[derive(Debug)]
pub struct Output {
    dest: Dest,
    committed: bool,
}

#[derive(Debug)]
enum Dest {
    Local {
        path: String,
        file: Option<BufWriter<File>>,
    },
    #[cfg(feature = "object-store")]
    Remote(Option<crate::io::store::ObjectWriter>),
}

impl Output {
    /// Creates `path` (a local path, `file://` URL, or a store URL).
    ///
    /// # Errors
    ///
    /// Those of creating the file or starting the upload, naming `path`.
    pub fn create(path: &str) -> Result<Output> {
        #[cfg(feature = "object-store")]
        {
            use crate::io::store::AnyFs;
            if AnyFs::is_url(path) {
                let w = crate::io::store::shared_fs().create(path)?;
                return Ok(Output {
                    dest: Dest::Remote(Some(w)),
                    committed: false,
                });
            }
        }
        let local = path.strip_prefix("file://").unwrap_or(path);
        let file = File::create(local)
            .map_err(|e| Error::io(e).with_file(path))?;
        Ok(Output {
            dest: Dest::Local {
                path: local.to_owned(),
                file: Some(BufWriter::with_capacity(256 * 1024, file)),
            },
            committed: false,
        })
    }

    /// Makes the output final: flushes a local file, completes an upload.
    ///
    /// # Errors
    ///
    /// Any write or upload error, naming the destination; nothing is then
    /// left behind.
    pub fn commit(mut self) -> Result<()> {
        match &mut self.dest {
            Dest::Local { path, file } => {
                let f = file.take().expect("a local output has its file");
                let res = f
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|f| f.sync_all());
                if let Err(e) = res {
                    let e = Error::io(e).with_file(&*path);
                    let _ = std::fs::remove_file(&*path);
                    self.committed = true;
                    return Err(e);
                }
            }
            #[cfg(feature = "object-store")]
            Dest::Remote(w) => {
                let w = w.take().expect("a remote output has its writer");
                self.committed = true;
                return w.commit();
            }
        }
        self.committed = true;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.dest {
            Dest::Local { file, .. } => {
                file.as_mut().expect("open until committed").write(buf)
            }
            #[cfg(feature = "object-store")]
            Dest::Remote(w) => w.as_mut().expect("open until committed").write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.dest {
            Dest::Local { file, .. } => {
                file.as_mut().expect("open until committed").flush()
            }
            #[cfg(feature = "object-store")]
            Dest::Remote(_) => Ok(()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        match &mut self.dest {
            Dest::Local { path, file } => {
                drop(file.take());
                // Not committed: leave no partial file behind.
                let _ = std::fs::remove_file(&*path);
            }
            #[cfg(feature = "object-store")]
            Dest::Remote(w) => drop(w.take()), // aborts the upload
        }
    }
}
