//! The one error type of feedstock.
//!
//! Every failure is an [`Error`]: a [`Kind`] that mirrors TensorFlow's
//! status codes (so `OutOfRange` still means "the input is exhausted, stop
//! cleanly"), a message, and the context a user needs to find the problem:
//! the file, the record key, the byte offset and the feature or column.
//!
//! Errors are cheap to clone (a queue or a coordinator hands the same error
//! to every thread that asks) and are `Send + Sync + 'static`.
//!
//! ```
//! use feedstock::{Error, Kind};
//!
//! let err = Error::data_loss("data CRC mismatch")
//!     .with_file("train-0.tfrecord")
//!     .with_offset(1024);
//! assert_eq!(err.kind(), Kind::DataLoss);
//! assert_eq!(
//!     err.to_string(),
//!     "DataLoss: data CRC mismatch (file train-0.tfrecord, offset 1024)"
//! );
//! ```

use std::fmt;
use std::io;
use std::sync::Arc;

/// A `Result` whose error is feedstock's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, in TensorFlow's vocabulary.
///
/// The kinds carry the same meaning as TensorFlow's status codes, which is
/// what makes the pipeline's shut-down protocol work: a thread that sees
/// [`Kind::OutOfRange`] has run out of input and ends cleanly; any other
/// kind is a real failure that stops the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// The input is exhausted: a closed, empty queue, or an epoch limit
    /// reached. Not a failure: it is how a pipeline ends.
    OutOfRange,
    /// The operation was cancelled, for example by closing a queue with
    /// `cancel_pending_enqueues` or by a stop request.
    Cancelled,
    /// The caller's input is malformed: a bad CSV field, a wrong dtype, a
    /// shape mismatch.
    InvalidArgument,
    /// Stored data is corrupt or truncated: a CRC mismatch, a cut file.
    DataLoss,
    /// A file or pattern matched nothing.
    NotFound,
    /// The system is not in a state where the operation can run, for example
    /// a dequeue from a queue whose producers never started.
    FailedPrecondition,
    /// A timeout expired before the operation could complete.
    DeadlineExceeded,
    /// A limit was hit, for example a record longer than the configured
    /// maximum.
    ResourceExhausted,
    /// Permission to read or write a file was denied.
    PermissionDenied,
    /// The operation is not supported.
    Unimplemented,
    /// The operation was aborted, typically because of a concurrent one.
    Aborted,
    /// A bug in feedstock or an invariant that did not hold.
    Internal,
    /// An I/O error with no better classification.
    Unknown,
}

impl Kind {
    /// The kind's name as TensorFlow spells its status code.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::OutOfRange => "OutOfRange",
            Kind::Cancelled => "Cancelled",
            Kind::InvalidArgument => "InvalidArgument",
            Kind::DataLoss => "DataLoss",
            Kind::NotFound => "NotFound",
            Kind::FailedPrecondition => "FailedPrecondition",
            Kind::DeadlineExceeded => "DeadlineExceeded",
            Kind::ResourceExhausted => "ResourceExhausted",
            Kind::PermissionDenied => "PermissionDenied",
            Kind::Unimplemented => "Unimplemented",
            Kind::Aborted => "Aborted",
            Kind::Internal => "Internal",
            Kind::Unknown => "Unknown",
        }
    }
}

impl Kind {
    /// The kind named `name` as [`Kind::as_str`] spells it.
    ///
    /// ```
    /// use feedstock::Kind;
    /// assert_eq!(Kind::from_name("OutOfRange"), Some(Kind::OutOfRange));
    /// assert_eq!(Kind::from_name("Nope"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Kind> {
        const ALL: [Kind; 13] = [
            Kind::OutOfRange,
            Kind::Cancelled,
            Kind::InvalidArgument,
            Kind::DataLoss,
            Kind::NotFound,
            Kind::FailedPrecondition,
            Kind::DeadlineExceeded,
            Kind::ResourceExhausted,
            Kind::PermissionDenied,
            Kind::Unimplemented,
            Kind::Aborted,
            Kind::Internal,
            Kind::Unknown,
        ];
        ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with its kind, message and location.
///
/// Build one with a constructor named after its kind
/// ([`Error::invalid_argument`], [`Error::data_loss`], ...) and add context
/// with the `with_*` methods. Context added later never overwrites context
/// already present, so an inner layer (which knows the offset) and an outer
/// layer (which knows the file) can both contribute.
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: Kind,
    message: String,
    file: Option<String>,
    key: Option<String>,
    offset: Option<u64>,
    field: Option<String>,
    source: Option<Arc<io::Error>>,
    invalid_dtype: bool,
    out_of_memory: bool,
}

macro_rules! constructors {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(message: impl Into<String>) -> Error {
                Error::new(Kind::$kind, message)
            }
        )*
    };
}

impl Error {
    /// Creates an error of `kind` with `message` and no context.
    pub fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                file: None,
                key: None,
                offset: None,
                field: None,
                source: None,
                invalid_dtype: false,
                out_of_memory: false,
            }),
        }
    }

    constructors! {
        /// An [`Kind::OutOfRange`] error: the input is exhausted.
        out_of_range => OutOfRange;
        /// A [`Kind::Cancelled`] error.
        cancelled => Cancelled;
        /// A [`Kind::InvalidArgument`] error.
        invalid_argument => InvalidArgument;
        /// A [`Kind::DataLoss`] error.
        data_loss => DataLoss;
        /// A [`Kind::NotFound`] error.
        not_found => NotFound;
        /// A [`Kind::FailedPrecondition`] error.
        failed_precondition => FailedPrecondition;
        /// A [`Kind::DeadlineExceeded`] error.
        deadline_exceeded => DeadlineExceeded;
        /// A [`Kind::ResourceExhausted`] error.
        resource_exhausted => ResourceExhausted;
        /// A [`Kind::Unimplemented`] error.
        unimplemented => Unimplemented;
        /// A [`Kind::Internal`] error.
        internal => Internal;
    }

    /// A [`Kind::InvalidArgument`] error about an element type: an
    /// argument of the wrong dtype, or operands whose dtypes differ.
    ///
    /// [`Error::is_invalid_dtype`] tells it from other invalid arguments,
    /// for bindings that raise the two differently (TensorFlow's Python
    /// API raises `TypeError` for these while building a graph and
    /// `ValueError` for the others).
    pub fn invalid_dtype(message: impl Into<String>) -> Error {
        let mut e = Error::invalid_argument(message);
        e.inner.invalid_dtype = true;
        e
    }

    /// A [`Kind::ResourceExhausted`] error for memory that could not be
    /// had: a buffer sized from a user's value (a `one_hot` depth, `tile`
    /// multiples, a batch of long records) that the allocator refused.
    ///
    /// [`Error::is_out_of_memory`] tells it from other exhausted
    /// resources (a record over a length limit), for bindings that raise
    /// it as their language's out-of-memory error (Python's
    /// `MemoryError`).
    pub fn out_of_memory(message: impl Into<String>) -> Error {
        let mut e = Error::resource_exhausted(message);
        e.inner.out_of_memory = true;
        e
    }

    /// Converts an I/O error, classifying it by its [`io::ErrorKind`]: a
    /// missing file (or a path through a file that is not a directory) is
    /// [`Kind::NotFound`], an unexpected end of file is [`Kind::DataLoss`],
    /// invalid data is [`Kind::DataLoss`], a directory where a file was
    /// expected or a loop of symbolic links is
    /// [`Kind::FailedPrecondition`].
    ///
    /// An `io::Error` that carries one of ours (a reader of the
    /// [`FileSystem`](crate::io::fs::FileSystem) seam failing through
    /// [`std::io::Read`]) gives it back as it was, so that its kind and
    /// context are said once, not wrapped in an `Unknown` that repeats
    /// them.
    ///
    /// ```
    /// use feedstock::{Error, Kind};
    ///
    /// let ours = Error::failed_precondition("changed").with_file("s3://b/k");
    /// let io = std::io::Error::other(ours.clone());
    /// assert_eq!(Error::io(io), ours);
    /// ```
    pub fn io(err: io::Error) -> Error {
        if let Some(ours) =
            err.get_ref().and_then(|e| e.downcast_ref::<Error>())
        {
            return ours.clone();
        }
        let kind = match err.kind() {
            io::ErrorKind::NotFound => Kind::NotFound,
            io::ErrorKind::PermissionDenied => Kind::PermissionDenied,
            io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData => {
                Kind::DataLoss
            }
            io::ErrorKind::InvalidInput => Kind::InvalidArgument,
            io::ErrorKind::TimedOut => Kind::DeadlineExceeded,
            io::ErrorKind::Interrupted => Kind::Aborted,
            io::ErrorKind::IsADirectory => Kind::FailedPrecondition,
            io::ErrorKind::NotADirectory => Kind::NotFound,
            _ if is_symlink_loop(&err) => Kind::FailedPrecondition,
            _ => Kind::Unknown,
        };
        let mut e = Error::new(kind, err.to_string());
        e.inner.source = Some(Arc::new(err));
        e
    }

    /// The kind of error.
    pub fn kind(&self) -> Kind {
        self.inner.kind
    }

    /// The message, without the context.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The file the error happened in, if known.
    pub fn file(&self) -> Option<&str> {
        self.inner.file.as_deref()
    }

    /// The record key (`FILE:N`) the error happened at, if known.
    pub fn key(&self) -> Option<&str> {
        self.inner.key.as_deref()
    }

    /// The byte offset in the file (or in the decompressed stream of a
    /// compressed file) the error happened at, if known.
    pub fn offset(&self) -> Option<u64> {
        self.inner.offset
    }

    /// The feature, column or component the error is about, if known.
    pub fn field(&self) -> Option<&str> {
        self.inner.field.as_deref()
    }

    /// True for an error made with [`Error::invalid_dtype`].
    pub fn is_invalid_dtype(&self) -> bool {
        self.inner.invalid_dtype
    }

    /// True for an error made with [`Error::out_of_memory`].
    pub fn is_out_of_memory(&self) -> bool {
        self.inner.out_of_memory
    }

    /// True for [`Kind::OutOfRange`]: the input ended, which a pipeline
    /// treats as a clean stop rather than a failure.
    pub fn is_out_of_range(&self) -> bool {
        self.inner.kind == Kind::OutOfRange
    }

    /// Adds the file, unless one is already set.
    pub fn with_file(mut self, file: impl AsRef<str>) -> Error {
        if self.inner.file.is_none() {
            self.inner.file = Some(file.as_ref().to_owned());
        }
        self
    }

    /// Renames the file already set (if any) with `rename`.
    ///
    /// For a layer that opens a file under another name than its caller
    /// gave (a `file://` URL opened as a local path): the errors of the
    /// layer below name the other name, and [`Error::with_file`] keeps
    /// it; this puts back the name the caller knows.
    ///
    /// ```
    /// use feedstock::Error;
    ///
    /// let e = Error::not_found("no such file").with_file("/data/a.csv");
    /// let e = e.map_file(|f| format!("file://{f}"));
    /// assert_eq!(e.file(), Some("file:///data/a.csv"));
    /// ```
    pub fn map_file(mut self, rename: impl FnOnce(&str) -> String) -> Error {
        if let Some(file) = &self.inner.file {
            self.inner.file = Some(rename(file));
        }
        self
    }

    /// Adds the record key, unless one is already set.
    pub fn with_key(mut self, key: impl AsRef<str>) -> Error {
        if self.inner.key.is_none() {
            self.inner.key = Some(key.as_ref().to_owned());
        }
        self
    }

    /// Adds the byte offset, unless one is already set.
    pub fn with_offset(mut self, offset: u64) -> Error {
        if self.inner.offset.is_none() {
            self.inner.offset = Some(offset);
        }
        self
    }

    /// Adds the feature, column or component name, unless one is already
    /// set.
    pub fn with_field(mut self, field: impl AsRef<str>) -> Error {
        if self.inner.field.is_none() {
            self.inner.field = Some(field.as_ref().to_owned());
        }
        self
    }

    /// Replaces the message, keeping kind and context.
    pub fn with_message(mut self, message: impl Into<String>) -> Error {
        self.inner.message = message.into();
        self
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        // io::Error has no equality; compare everything else.
        let (a, b) = (&*self.inner, &*other.inner);
        a.kind == b.kind
            && a.message == b.message
            && a.file == b.file
            && a.key == b.key
            && a.offset == b.offset
            && a.field == b.field
            && a.invalid_dtype == b.invalid_dtype
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &*self.inner;
        write!(f, "{}: {}", i.kind, i.message)?;
        let mut parts: Vec<String> = Vec::new();
        if let Some(file) = &i.file {
            parts.push(format!("file {file}"));
        }
        if let Some(key) = &i.key {
            parts.push(format!("key {key}"));
        }
        if let Some(offset) = i.offset {
            parts.push(format!("offset {offset}"));
        }
        if let Some(field) = &i.field {
            parts.push(format!("field {field}"));
        }
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The Display form is what a failed test or `unwrap` should show.
        write!(f, "Error({self})")
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A copy of `e`, for a reader that returns the error that stopped it on
/// every later read: one of ours inside it whole (its kind, file and
/// offset, which [`Error::io`] takes out), else its kind and text.
pub(crate) fn copy_io(e: &io::Error) -> io::Error {
    match e.get_ref().and_then(|r| r.downcast_ref::<Error>()) {
        Some(ours) => io::Error::new(e.kind(), ours.clone()),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}

/// True for "too many levels of symbolic links" (`ELOOP`), whose
/// `io::ErrorKind` is not stable yet.
fn is_symlink_loop(err: &io::Error) -> bool {
    // ELOOP is 40 on Linux and 62 on the BSDs and macOS.
    let eloop = if cfg!(target_os = "linux") { 40 } else { 62 };
    cfg!(unix) && err.raw_os_error() == Some(eloop)
}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Error {
        Error::io(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_lists_context_in_order() {
        let e = Error::invalid_argument("bad field")
            .with_field("age")
            .with_key("a.csv:3")
            .with_file("a.csv");
        assert_eq!(
            e.to_string(),
            "InvalidArgument: bad field (file a.csv, key a.csv:3, field age)"
        );
    }

    #[test]
    fn invalid_dtype_is_an_invalid_argument_told_apart() {
        let e = Error::invalid_dtype("add: operands differ in dtype");
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.is_invalid_dtype());
        assert!(!Error::invalid_argument("bad shape").is_invalid_dtype());
        assert_eq!(
            e.clone().with_field("x").to_string(),
            "InvalidArgument: add: operands differ in dtype (field x)"
        );
    }

    #[test]
    fn inner_context_wins_over_outer() {
        let e = Error::data_loss("cut").with_offset(7).with_offset(99);
        assert_eq!(e.offset(), Some(7));
    }

    #[test]
    fn io_errors_are_classified() {
        let nf = io::Error::new(io::ErrorKind::NotFound, "nope");
        assert_eq!(Error::from(nf).kind(), Kind::NotFound);
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "short");
        assert_eq!(Error::from(eof).kind(), Kind::DataLoss);
    }

    #[test]
    fn errors_are_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Error>();
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
