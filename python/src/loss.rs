//! What a read does when it finishes with input data lost: raise, warn or go on.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use recfmt_core::Integrity;

use crate::errors::{Kind, invalid, loss_message, py_error};

/// The integrity report as `recfmt info --json` prints it.
pub(crate) fn integrity_dict<'py>(
    py: Python<'py>,
    integrity: &Integrity,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("status", integrity.status.name())?;
    dict.set_item("bytes_lost", integrity.bytes_lost)?;
    dict.set_item("truncated_at", integrity.truncated_at)?;
    dict.set_item("records_skipped", integrity.records_skipped)?;
    dict.set_item("warnings", integrity.warnings.clone())?;
    Ok(dict)
}

/// What to do when a read finishes with data lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnLoss {
    Raise,
    Warn,
    Ignore,
}

impl OnLoss {
    pub(crate) fn parse(text: &str) -> PyResult<Self> {
        match text {
            "raise" => Ok(OnLoss::Raise),
            "warn" => Ok(OnLoss::Warn),
            "ignore" => Ok(OnLoss::Ignore),
            other => Err(invalid(format!(
                "on_loss must be \"raise\", \"warn\" or \"ignore\", not {other:?}"
            ))),
        }
    }

    /// Raises or warns about a finished read's loss; `table` (what was read) goes on the
    /// exception.
    pub(crate) fn report(
        self,
        py: Python<'_>,
        path: &Path,
        integrity: &Integrity,
        table: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if !integrity.lost_data() || self == OnLoss::Ignore {
            return Ok(());
        }
        let message = loss_message(path, integrity);
        if self == OnLoss::Warn {
            let category = py.import("recfmt.errors")?.getattr("DataLostWarning")?;
            return PyErr::warn(py, &category, &std::ffi::CString::new(message)?, 2);
        }
        let error = py_error(Kind::DataLost, message);
        let value = error.value(py);
        value.setattr("integrity", integrity_dict(py, integrity)?)?;
        value.setattr("table", table.map(|t| t.clone().unbind()))?;
        Err(error)
    }
}
