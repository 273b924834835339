//! Local file-name patterns matched as TensorFlow's `GetMatchingPaths`
//! matches them (`tf.io.matching_files`, `match_filenames_once`), so
//! that a pipeline sees the same files, spelled the same way (its keys
//! are `file:offset`), as it would under TensorFlow:
//!
//! - each path component is matched by POSIX `fnmatch` without
//!   `FNM_PERIOD`: `*` and `?` match a leading dot, `[!..]` and `[^..]`
//!   negate, a backslash escapes the next character, and `**` is `*`
//!   (no recursion);
//! - the directory part before the first wildcard is kept as written,
//!   and a pattern with no directory part is matched in `.`, its matches
//!   spelled `./name`;
//! - a pattern without wildcards is the path itself, if it exists.
//!
//! One difference: the sidecar indexes feedstock writes beside data files
//! ([`sidecar_path`](crate::io::index::sidecar_path)) match only a
//! component that spells their leading dot (`.*`), so a pipeline over
//! `dir/*` does not read them as data.
//!
//! The `glob` crate walks with the shell's rules instead (hidden files
//! left out, `**` recursive, no `[^..]` or escapes), so only its
//! single-component matcher is used here, on patterns translated from
//! `fnmatch`'s syntax.

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::index::is_sidecar;

/// The characters that make a pattern a pattern, as TensorFlow counts
/// them (a backslash too).
const WILD: [char; 4] = ['*', '?', '[', '\\'];

/// The local paths matching `pattern`, sorted; empty if none match.
///
/// # Errors
/// InvalidArgument naming the pattern if a component is malformed (an
/// unclosed `[`).
pub(crate) fn matching_paths(pattern: &str) -> Result<Vec<String>> {
    let Some(first) = pattern.find(WILD) else {
        let exists = Path::new(pattern).exists();
        return Ok(if exists {
            vec![pattern.to_owned()]
        } else {
            vec![]
        });
    };
    let (mut found, rest) = match pattern[..first].rfind('/') {
        Some(i) => (vec![pattern[..=i].to_owned()], &pattern[i + 1..]),
        None => (vec!["./".to_owned()], pattern),
    };
    let parts: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let matcher = Component::new(part, pattern)?;
        let mut next = Vec::new();
        for dir in &found {
            matcher.extend(dir, last, &mut next);
        }
        found = next;
    }
    found.sort();
    Ok(found)
}

/// One component of a pattern.
enum Component<'p> {
    /// No wildcard: the name itself.
    Literal(&'p str),
    Pattern(glob::Pattern),
}

impl<'p> Component<'p> {
    fn new(part: &'p str, pattern: &str) -> Result<Self> {
        if !part.contains(WILD) {
            return Ok(Component::Literal(part));
        }
        glob::Pattern::new(&from_fnmatch(part))
            .map(Component::Pattern)
            .map_err(|e| {
                Error::invalid_argument(format!("bad glob pattern: {e}"))
                    .with_file(pattern)
            })
    }

    /// Whether the component starts with a literal dot: only such a one
    /// matches a sidecar index.
    fn spells_dot(&self) -> bool {
        match self {
            Component::Literal(name) => name.starts_with('.'),
            Component::Pattern(p) => p.as_str().starts_with('.'),
        }
    }

    /// Adds to `out` the entries of `dir` (a path ending in `/`) this
    /// component matches, as `dir` + name + `/` unless `last` (then only
    /// directories are kept: later components look inside them).
    fn extend(&self, dir: &str, last: bool, out: &mut Vec<String>) {
        let keep = |path: String, out: &mut Vec<String>| {
            if last {
                out.push(path);
            } else if Path::new(&path).is_dir() {
                out.push(path + "/");
            }
        };
        match self {
            Component::Literal(name) => {
                let path = format!("{dir}{name}");
                if Path::new(&path).exists() {
                    keep(path, out);
                }
            }
            Component::Pattern(p) => {
                // An unreadable directory has no matches, as in
                // TensorFlow's walk.
                let Ok(entries) = std::fs::read_dir(dir) else {
                    return;
                };
                let opts = glob::MatchOptions {
                    case_sensitive: true,
                    require_literal_separator: true,
                    require_literal_leading_dot: false,
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let Some(name) = name.to_str() else { continue };
                    let sidecar = is_sidecar(name) && !self.spells_dot();
                    if p.matches_with(name, opts) && !sidecar {
                        keep(format!("{dir}{name}"), out);
                    }
                }
            }
        }
    }
}

/// An `fnmatch` component in the `glob` crate's syntax: `\x` becomes
/// `x` or `[x]` (for a character special to it), `[^` becomes `[!`, and
/// runs of `*` one `*`.
fn from_fnmatch(part: &str) -> String {
    let mut out = String::with_capacity(part.len() + 4);
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('*' | '?' | '[' | ']')) => {
                    out.push('[');
                    out.push(e);
                    out.push(']');
                }
                Some(e) => out.push(e),
                None => out.push_str("[\\]"),
            },
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push('*');
            }
            '[' => {
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('!');
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pattern's matches as TensorFlow 2.21's `tf.io.matching_files`
    /// gave them over the same tree.
    #[test]
    fn matches_as_tensorflow_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        for f in [
            "a.txt",
            "b.txt",
            ".hidden.txt",
            "x[1].txt",
            "sub1/x",
            "sub1/c.txt",
            ".hsub/x",
            ".a.txt.feedstock-index",
        ] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        }
        let all =
            [".hidden.txt", ".hsub", "a.txt", "b.txt", "sub1", "x[1].txt"];
        let cases: &[(&str, &[&str])] = &[
            ("/*.txt", &[".hidden.txt", "a.txt", "b.txt", "x[1].txt"]),
            ("/*", &all),
            ("/**", &all),
            ("/*/x", &[".hsub/x", "sub1/x"]),
            ("/sub1/*.txt", &["sub1/c.txt"]),
            ("/[^a].txt", &["b.txt"]),
            ("/[!a].txt", &["b.txt"]),
            ("/x\\[1\\].txt", &["x[1].txt"]),
            ("/?.txt", &["a.txt", "b.txt"]),
            ("/.*", &[".a.txt.feedstock-index", ".hidden.txt", ".hsub"]),
            ("/sub1/../?.txt", &["sub1/../a.txt", "sub1/../b.txt"]),
            ("/a.txt", &["a.txt"]),
            ("/zzz*", &[]),
            ("/nothing", &[]),
        ];
        for (pattern, want) in cases {
            let got = matching_paths(&format!("{d}{pattern}")).unwrap();
            let want: Vec<String> =
                want.iter().map(|w| format!("{d}/{w}")).collect();
            assert_eq!(got, want, "{pattern}");
        }
    }

    #[test]
    fn a_pattern_without_a_directory_is_matched_in_the_working_one() {
        // The crate's own directory, whatever the test's working one is.
        let here = std::env::current_dir().unwrap();
        let got = matching_paths("Cargo.tom?").unwrap();
        assert_eq!(got, vec!["./Cargo.toml".to_owned()], "in {here:?}");
        assert_eq!(matching_paths("Cargo.toml").unwrap(), ["Cargo.toml"]);
    }

    #[test]
    fn an_unclosed_bracket_is_a_bad_pattern() {
        let e = matching_paths("/tmp/[ab").unwrap_err();
        assert_eq!(e.kind(), crate::Kind::InvalidArgument);
    }

    #[test]
    fn fnmatch_syntax_is_translated() {
        assert_eq!(from_fnmatch("[^a]**\\*\\b"), "[!a]*[*]b");
    }
}
