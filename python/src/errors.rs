//! recfmt errors as the `recfmt` package's exceptions.
//!
//! The exception classes are Python classes (python/recfmt/errors.py): there they live in
//! the `recfmt` namespace, pickle, and also derive from the built-in a Python user expects
//! (`FileNotFoundError`, `KeyError`, `ValueError`), which one native base cannot give. This
//! module only decides the kind; `recfmt.errors._error` builds the exception.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use recfmt_core::{ErrorKind, Integrity};

/// What went wrong, as the Python exception class says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    NotFound,
    Exists,
    UnknownFormat,
    Malformed,
    Unsupported,
    Limit,
    Invalid,
    NoStream,
    NoColumn,
    DataLost,
    Other,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::NotFound => "not_found",
            Kind::Exists => "exists",
            Kind::UnknownFormat => "unknown_format",
            Kind::Malformed => "malformed",
            Kind::Unsupported => "unsupported",
            Kind::Limit => "limit",
            Kind::Invalid => "invalid",
            Kind::NoStream => "no_stream",
            Kind::NoColumn => "no_column",
            Kind::DataLost => "data_lost",
            Kind::Other => "error",
        }
    }

    fn of(kind: ErrorKind, io: Option<&std::io::Error>) -> Kind {
        match io.map(std::io::Error::kind) {
            Some(std::io::ErrorKind::NotFound) => return Kind::NotFound,
            Some(std::io::ErrorKind::AlreadyExists) => return Kind::Exists,
            _ => {}
        }
        match kind {
            ErrorKind::UnknownFormat => Kind::UnknownFormat,
            // A truncated input is a malformed one to Python, as it always was.
            ErrorKind::Malformed | ErrorKind::Truncated => Kind::Malformed,
            ErrorKind::Unsupported => Kind::Unsupported,
            ErrorKind::Limit => Kind::Limit,
            ErrorKind::Invalid => Kind::Invalid,
            _ => Kind::Other,
        }
    }
}

/// The exception of `kind` with `message` (command-line flags in it respelled as keyword
/// arguments by the Python side).
pub(crate) fn py_error(kind: Kind, message: impl Into<String>) -> PyErr {
    static MAKE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let message = message.into();
    Python::attach(|py| {
        let made = MAKE
            .get_or_try_init(py, || {
                PyResult::Ok(py.import("recfmt.errors")?.getattr("_error")?.unbind())
            })
            .and_then(|make| make.bind(py).call1((kind.name(), message)));
        match made {
            Ok(exception) => PyErr::from_value(exception),
            Err(failed) => failed,
        }
    })
}

/// `message`, starting with the file it is about unless it names it already.
pub(crate) fn in_file(path: &Path, message: String) -> String {
    let shown = path.display().to_string();
    if shown.is_empty() || message.contains(&shown) {
        message
    } else {
        format!("{shown}: {message}")
    }
}

/// The messages of `error` and its causes, as the command line prints them (`a: b: c`).
fn chain_message(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = e.source();
    }
    text
}

/// A library error about `path` as the Python exception of its kind.
pub(crate) fn core_error(path: &Path, error: recfmt_core::Error) -> PyErr {
    let kind = Kind::of(error.kind(), error.io_error());
    py_error(kind, in_file(path, chain_message(&error)))
}

/// A front-door error about `path` as the Python exception of its kind, with the full message.
pub(crate) fn facade_error(path: &Path, error: recfmt::Error) -> PyErr {
    let kind = Kind::of(error.kind(), error.io_error());
    py_error(kind, in_file(path, chain_message(&error)))
}

/// A wrong argument: a `ValueError` (and `RecfmtError`) with plain words.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    py_error(Kind::Invalid, message)
}

/// One line saying what was lost, like the command line's report.
pub(crate) fn loss_message(path: &Path, integrity: &Integrity) -> String {
    let mut text = format!(
        "{}: input data lost ({}",
        path.display(),
        integrity.status.name()
    );
    if let Some(at) = integrity.truncated_at {
        text.push_str(&format!(", truncated at byte {at}"));
    }
    if integrity.bytes_lost > 0 {
        text.push_str(&format!(", {} bytes lost", integrity.bytes_lost));
    }
    if integrity.records_skipped > 0 {
        text.push_str(&format!(
            ", {} corrupt records skipped",
            integrity.records_skipped
        ));
    }
    text.push(')');
    if let Some(first) = integrity.warnings.first() {
        text.push_str(&format!(": {first}"));
    }
    text
}
