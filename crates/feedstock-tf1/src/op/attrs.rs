//! An op's attributes as the Python binding hands them over: a name to a
//! plain value (TensorFlow's `AttrValue`, reduced to what the input
//! system's ops take), read into an op's typed fields by [`FromAttr`].

use std::collections::BTreeMap;

use feedstock::error::{Error, Result};
use feedstock::DType;

/// One attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// Python's `None`: an optional attribute left out.
    None,
    /// A bool.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// An integer above `i64::MAX` (a 64-bit seed).
    UInt(u64),
    /// A float.
    Float(f64),
    /// A string (also a dtype's or an enum's name).
    Str(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// A list of integers.
    Ints(Vec<i64>),
    /// A list of floats.
    Floats(Vec<f64>),
}

/// An op's attributes by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attrs {
    map: BTreeMap<String, Attr>,
}

impl Attrs {
    /// No attributes.
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// Sets attribute `name`.
    pub fn set(&mut self, name: impl Into<String>, value: Attr) {
        self.map.insert(name.into(), value);
    }

    /// Attribute `name` of op `op` as a `T`.
    ///
    /// # Errors
    /// InvalidArgument naming the op and the attribute when it is missing
    /// (and `T` is not an `Option`) or of another kind.
    pub fn get<T: FromAttr>(&self, op: &str, name: &str) -> Result<T> {
        let value = self.map.get(name).unwrap_or(&Attr::None);
        T::from_attr(value).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{op}: attribute {name} must be {}, not {value:?}",
                T::WANT
            ))
        })
    }
}

impl<K: Into<String>> FromIterator<(K, Attr)> for Attrs {
    fn from_iter<I: IntoIterator<Item = (K, Attr)>>(iter: I) -> Attrs {
        Attrs {
            map: iter.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
}

/// A field type an attribute can be read into.
pub trait FromAttr: Sized {
    /// What the attribute must be, for errors.
    const WANT: &'static str;
    /// The value, or `None` when `a` is of another kind.
    fn from_attr(a: &Attr) -> Option<Self>;
}

impl FromAttr for bool {
    const WANT: &'static str = "a bool";
    fn from_attr(a: &Attr) -> Option<bool> {
        match a {
            Attr::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FromAttr for i64 {
    const WANT: &'static str = "an integer";
    fn from_attr(a: &Attr) -> Option<i64> {
        match a {
            Attr::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl FromAttr for usize {
    const WANT: &'static str = "a non-negative integer";
    fn from_attr(a: &Attr) -> Option<usize> {
        i64::from_attr(a).and_then(|i| usize::try_from(i).ok())
    }
}

impl FromAttr for u64 {
    const WANT: &'static str = "a non-negative integer";
    fn from_attr(a: &Attr) -> Option<u64> {
        match a {
            Attr::UInt(u) => Some(*u),
            a => i64::from_attr(a).and_then(|i| u64::try_from(i).ok()),
        }
    }
}

impl FromAttr for f64 {
    const WANT: &'static str = "a number";
    fn from_attr(a: &Attr) -> Option<f64> {
        match a {
            Attr::Float(f) => Some(*f),
            Attr::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl FromAttr for String {
    const WANT: &'static str = "a string";
    fn from_attr(a: &Attr) -> Option<String> {
        match a {
            Attr::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl FromAttr for Vec<u8> {
    const WANT: &'static str = "bytes or a string";
    fn from_attr(a: &Attr) -> Option<Vec<u8>> {
        match a {
            Attr::Bytes(b) => Some(b.clone()),
            Attr::Str(s) => Some(s.as_bytes().to_vec()),
            _ => None,
        }
    }
}

impl FromAttr for Vec<i64> {
    const WANT: &'static str = "a list of integers";
    fn from_attr(a: &Attr) -> Option<Vec<i64>> {
        match a {
            Attr::Ints(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl FromAttr for Vec<usize> {
    const WANT: &'static str = "a list of non-negative integers";
    fn from_attr(a: &Attr) -> Option<Vec<usize>> {
        match a {
            Attr::Ints(v) => {
                v.iter().map(|&i| usize::try_from(i).ok()).collect()
            }
            _ => None,
        }
    }
}

impl FromAttr for Vec<f64> {
    const WANT: &'static str = "a list of numbers";
    fn from_attr(a: &Attr) -> Option<Vec<f64>> {
        match a {
            Attr::Floats(v) => Some(v.clone()),
            Attr::Ints(v) => Some(v.iter().map(|&i| i as f64).collect()),
            _ => None,
        }
    }
}

impl FromAttr for DType {
    const WANT: &'static str = "a dtype name";
    fn from_attr(a: &Attr) -> Option<DType> {
        match a {
            Attr::Str(s) => DType::from_name(s).ok(),
            _ => None,
        }
    }
}

impl<T: FromAttr> FromAttr for Option<T> {
    const WANT: &'static str = T::WANT;
    fn from_attr(a: &Attr) -> Option<Option<T>> {
        match a {
            Attr::None => Some(None),
            a => T::from_attr(a).map(Some),
        }
    }
}

/// Reads a fieldless enum from its name: `attr_enum!(Ty, "what", "name"
/// => Ty::Variant, ...)`.
macro_rules! attr_enum {
    ($ty:ty, $want:literal, $($name:literal => $v:expr),+ $(,)?) => {
        impl $crate::op::attrs::FromAttr for $ty {
            const WANT: &'static str = $want;
            fn from_attr(a: &$crate::op::attrs::Attr) -> Option<$ty> {
                match a {
                    $crate::op::attrs::Attr::Str(s) => match s.as_str() {
                        $($name => Some($v),)+
                        _ => None,
                    },
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use attr_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_and_names_a_wrong_one() {
        let a: Attrs = [
            ("depth", Attr::Int(3)),
            ("dtype", Attr::Str("float32".into())),
            ("seed", Attr::None),
            ("dims", Attr::Ints(vec![2, -1])),
        ]
        .into_iter()
        .collect();
        assert_eq!(a.get::<usize>("OneHot", "depth").unwrap(), 3);
        assert_eq!(a.get::<f64>("OneHot", "depth").unwrap(), 3.0);
        assert_eq!(a.get::<DType>("Cast", "dtype").unwrap(), DType::F32);
        assert_eq!(a.get::<Option<u64>>("R", "seed").unwrap(), None);
        assert_eq!(a.get::<Option<u64>>("R", "absent").unwrap(), None);
        let big: Attrs =
            [("seed", Attr::UInt(u64::MAX))].into_iter().collect();
        assert_eq!(a.get::<u64>("R", "depth").unwrap(), 3);
        assert_eq!(
            big.get::<Option<u64>>("R", "seed").unwrap(),
            Some(u64::MAX)
        );
        assert!(big.get::<i64>("R", "seed").is_err());
        assert_eq!(a.get::<Vec<i64>>("R", "dims").unwrap(), vec![2, -1]);
        let e = a.get::<Vec<usize>>("Reshape", "dims").unwrap_err();
        assert!(e.to_string().contains("Reshape: attribute dims"), "{e}");
        let e = a.get::<bool>("OneHot", "missing").unwrap_err();
        assert!(e.to_string().contains("must be a bool"), "{e}");
    }
}
