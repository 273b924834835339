//! Records of TFRecord files with an exact resume: the
//! [`dataset`](crate::dataset) engine handing out records undecoded (see
//! [`RecordStream`]).

pub use crate::dataset::stream::*;
