//! The one error type of the algebra.
//!
//! Every failing precondition says which operation failed, in which mode
//! (a path of mode indices, outermost first, where the failure is tied to one)
//! and why. Callers print it as it is: `eval -` prints `error: {err}`.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The operation that failed, e.g. `composition`.
    pub op: String,
    /// The mode the failure is tied to, e.g. `1` or `1.0`; empty when none.
    pub mode: String,
    /// Why, in words.
    pub reason: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error { op: op.into(), mode: String::new(), reason: reason.into() }
    }

    pub fn at(op: impl Into<String>, mode: impl fmt::Display, reason: impl Into<String>) -> Error {
        Error { op: op.into(), mode: mode.to_string(), reason: reason.into() }
    }

    /// Arithmetic overflow: the result does not fit the 64-bit index type.
    pub fn overflow(what: impl fmt::Display) -> Error {
        Error::new("arithmetic", format!("{what} overflows the 64-bit index type"))
    }

    /// Re-tags an error coming from a nested operation with the outer
    /// operation's name and mode, keeping the inner reason. The mode paths are
    /// joined so a failure deep in a by-mode operation names its full path.
    pub fn in_mode(mut self, op: &str, mode: usize) -> Error {
        self.mode = if self.mode.is_empty() { mode.to_string() } else { format!("{mode}.{}", self.mode) };
        if self.op != op {
            self.reason = format!("{}: {}", self.op, self.reason);
            self.op = op.to_string();
        }
        self
    }

    /// Re-tags an error with an outer operation name (no mode).
    pub fn within(mut self, op: &str) -> Error {
        if self.op != op {
            self.reason = format!(
                "{}{}: {}",
                self.op,
                if self.mode.is_empty() { String::new() } else { format!(" (mode {})", self.mode) },
                self.reason
            );
            self.op = op.to_string();
            self.mode.clear();
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mode.is_empty() {
            write!(f, "{}: {}", self.op, self.reason)
        } else {
            write!(f, "{}: mode {}: {}", self.op, self.mode, self.reason)
        }
    }
}

impl std::error::Error for Error {}
