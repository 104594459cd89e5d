//! A project-relative path as the Files pane keys it: the real bytes of the name (an
//! `OsString` with `/` separators, "" for the root), so two names that are not UTF-8 and
//! would both print as `bad�` stay two entries, and opening one opens that one. It shows
//! itself escaped (`bad\xff`, see `crate::text`); agents' tools address files by UTF-8
//! strings, so [`RelPath::to_str`] says whether they can reach it at all.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(OsString);

impl RelPath {
    pub fn root() -> RelPath {
        RelPath::default()
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_os_str(&self) -> &OsStr {
        &self.0
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_encoded_bytes()
    }

    /// The path as agents' tools name it, when it is UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        self.0.to_str()
    }

    /// The path as shown: invalid bytes and control/bidi characters escaped.
    pub fn shown(&self) -> Cow<'_, str> {
        crate::text::escape_os(&self.0)
    }

    /// The child `name` of this folder.
    pub fn join(&self, name: &OsStr) -> RelPath {
        if self.is_root() {
            return RelPath(name.to_os_string());
        }
        let mut s = self.0.clone();
        s.push("/");
        s.push(name);
        RelPath(s)
    }

    /// The folder holding this path ("" for a top-level name).
    pub fn parent(&self) -> RelPath {
        let b = self.bytes();
        match b.iter().rposition(|&c| c == b'/') {
            Some(i) => RelPath(os_from(&b[..i])),
            None => RelPath::root(),
        }
    }

    /// Does the path start with the UTF-8 prefix `prefix` (bytewise)?
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.bytes().starts_with(prefix.as_bytes())
    }

    /// The folders above this path, outermost first, starting with the root.
    pub fn ancestors(&self) -> Vec<RelPath> {
        let b = self.bytes();
        let mut out = vec![RelPath::root()];
        for (i, &c) in b.iter().enumerate() {
            if c == b'/' {
                out.push(RelPath(os_from(&b[..i])));
            }
        }
        out
    }

    /// The absolute path under `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        if self.is_root() {
            root.to_path_buf()
        } else {
            root.join(&self.0)
        }
    }
}

fn os_from(bytes: &[u8]) -> OsString {
    // SAFETY: `bytes` is a prefix of an OsString's encoded bytes cut just before an ASCII
    // `/`, which is a valid boundary of the platform encoding.
    unsafe { OsStr::from_encoded_bytes_unchecked(bytes) }.to_os_string()
}

impl From<&str> for RelPath {
    fn from(s: &str) -> RelPath {
        RelPath(OsString::from(s))
    }
}

impl From<String> for RelPath {
    fn from(s: String) -> RelPath {
        RelPath(OsString::from(s))
    }
}

impl From<&RelPath> for RelPath {
    fn from(p: &RelPath) -> RelPath {
        p.clone()
    }
}

impl From<OsString> for RelPath {
    fn from(s: OsString) -> RelPath {
        RelPath(s)
    }
}

impl AsRef<Path> for RelPath {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl PartialEq<str> for RelPath {
    fn eq(&self, other: &str) -> bool {
        self.bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for RelPath {
    fn eq(&self, other: &&str) -> bool {
        self.bytes() == other.as_bytes()
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn real_bytes_are_kept_and_shown_escaped() {
        let a = RelPath::from("dir").join(OsStr::from_bytes(b"bad\xff"));
        let b = RelPath::from("dir").join(OsStr::from_bytes(b"bad\xfe"));
        assert_ne!(a, b);
        assert_eq!(a.shown(), "dir/bad\\xff");
        assert!(a.to_str().is_none());
        assert_eq!(a.parent(), "dir");
        assert_eq!(a.ancestors(), [RelPath::root(), RelPath::from("dir")]);
        assert_eq!(
            RelPath::from("a/b/c.md").ancestors(),
            ["", "a", "a/b"].map(RelPath::from)
        );
        assert_eq!(RelPath::from("c.md").parent(), RelPath::root());
    }
}
