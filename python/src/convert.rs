//! `recfmt.convert`, `recfmt.validate` and `Recording.info`: the command line's work, run off
//! the Python thread so that Ctrl-C is seen while it runs.
//!
//! Python sees a signal only on its main thread, and only when that thread asks
//! (`PyErr_CheckSignals`). The work therefore runs on a thread of its own with a
//! [`recfmt::Cancel`] in its open options, while the calling thread, with the GIL released,
//! asks every few milliseconds. On Ctrl-C it cancels the token: every reader of the call
//! stops at its next record or batch, the writers drop their unfinished temporary files, so
//! nothing is committed that was not already, and the signal's `KeyboardInterrupt` is raised.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use recfmt_core::{FormatOptions, TimeSystem};

use crate::errors::{facade_error, invalid};
use crate::read::{TimeArg, time_arg};

/// How often the waiting thread asks Python whether a signal arrived.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` on its own thread and waits for it with the GIL released, checking for
/// signals. When one arrives, `cancel` is cancelled (`work` must hand it to every read it
/// does), and once `work` has stopped the signal's exception (`KeyboardInterrupt`) is raised
/// whatever `work` returned.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &recfmt::Cancel,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let mut signal: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::thread::scope(|scope| {
            let worker = scope.spawn(work);
            while !worker.is_finished() {
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    cancel.cancel();
                    signal = Some(e);
                }
                std::thread::park_timeout(SIGNAL_POLL);
            }
            worker.join()
        })
    });
    if let Some(signal) = signal {
        return Err(signal);
    }
    outcome.map_err(|panic| std::panic::resume_unwind(panic))
}

/// `recfmt info --json` of `path`, as Python objects; Ctrl-C stops the scan.
pub(crate) fn info<'py>(
    py: Python<'py>,
    path: &Path,
    mut options: recfmt::OpenOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let cancel = recfmt::Cancel::new();
    options.cancel = Some(cancel.clone());
    let text = interruptible(py, &cancel, || {
        recfmt::inspect::info(recfmt::default_registry(), path, &options)
            .map(|report| report.to_json())
    })?
    .map_err(|e| facade_error(path, e))?;
    from_json(py, &text)
}

/// A JSON text as Python objects.
pub(crate) fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// Reads a recording completely with its format's own checks and returns the report dict of
/// `recfmt validate --json`; see `recfmt.validate`.
#[pyfunction]
#[pyo3(signature = (path, *, against=None, format=None, strict=false, layouts=Vec::new(), resync=false))]
pub(crate) fn validate<'py>(
    py: Python<'py>,
    path: PathBuf,
    against: Option<PathBuf>,
    format: Option<String>,
    strict: bool,
    layouts: Vec<PathBuf>,
    resync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let cancel = recfmt::Cancel::new();
    let options = recfmt::validate::ValidateOptions {
        open: recfmt::OpenOptions {
            format,
            strict,
            resync,
            layouts,
            cancel: Some(cancel.clone()),
            ..recfmt::OpenOptions::default()
        },
        against,
    };
    let text = interruptible(py, &cancel, || {
        recfmt::validate::validate(recfmt::default_registry(), &path, &options)
            .map(|report| report.to_json())
    })?
    .map_err(|e| facade_error(&path, e))?;
    from_json(py, &text)
}

/// A time bound from Python as `convert --start` takes it: seconds become `"<s>s"`, text is
/// passed on.
fn time_text(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    Ok(time_arg(value)?.map(|arg| match arg {
        TimeArg::Seconds(seconds) => format!("{seconds}s"),
        TimeArg::Text(text) => text,
    }))
}

/// Format options from Python: a mapping `{"carla.build": "0.9.10"}` or `"key=value"` texts,
/// as `--opt` takes them.
fn format_options(value: Option<&Bound<'_, PyAny>>) -> PyResult<FormatOptions> {
    let mut options = FormatOptions::new();
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(options);
    };
    let bad = |e: recfmt_core::Error| invalid(format!("opt: {e}"));
    if let Ok(map) = value.cast::<PyDict>() {
        for (key, value) in map.iter() {
            options.push(key.str()?.to_string(), value.str()?.to_string());
        }
    } else if let Ok(text) = value.extract::<String>() {
        options.push_pair(&text).map_err(bad)?;
    } else {
        for pair in value.try_iter()? {
            options
                .push_pair(&pair?.extract::<String>()?)
                .map_err(bad)?;
        }
    }
    Ok(options)
}

/// One conversion's report as a dict: `input`, `output`, `outcome`, `notes`, `integrity` (as
/// `info --json` prints it) and `files`, `[(stream or None, path, rows)]`.
fn report_dict<'py>(
    py: Python<'py>,
    report: &recfmt::convert::ConvertReport,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("input", &report.input)?;
    dict.set_item("output", &report.output)?;
    let outcome = match report.outcome {
        recfmt::Outcome::Complete => "complete",
        recfmt::Outcome::DataLost => "data_lost",
        recfmt::Outcome::Invalid => "invalid",
    };
    dict.set_item("outcome", outcome)?;
    dict.set_item("notes", report.notes.clone())?;
    let integrity = serde_json::to_string(&report.integrity)
        .map_err(|e| invalid(format!("integrity report: {e}")))?;
    dict.set_item("integrity", from_json(py, &integrity)?)?;
    let files: Vec<(Option<String>, PathBuf, u64)> = report
        .files
        .iter()
        .map(|f| (f.stream.clone(), f.path.clone(), f.rows))
        .collect();
    dict.set_item("files", files)?;
    Ok(dict)
}

/// Removes the folders under and at `dir` that are empty (deepest first): what an interrupted
/// conversion created around the files it did not commit.
fn remove_empty_dirs(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Converts recordings through the library's front door, exactly as `recfmt convert` does;
/// see `recfmt.convert`. Returns, per input in order, its report dict or the exception that
/// stopped it (the other inputs are still converted, as on the command line). Ctrl-C stops
/// it after the batch being written, with nothing committed that was not already.
#[pyfunction]
#[pyo3(signature = (paths, out, to, *, several=false, partition=false, source=None, format=None, strict=false, resync=false, layouts=Vec::new(), opt=None, streams=Vec::new(), exclude_streams=Vec::new(), signals=Vec::new(), exclude_signals=Vec::new(), start=None, end=None, carry_last=false, merge=None, max_rows=None, upcast_f64=false, time_column=None, string_width=None, batch_rows=65_536, row_group_rows=1_048_576, row_group_bytes=67_108_864, row_group_memory=8_388_608, byte_stream_split=false, compression="zstd", delimiter=",", units_row=false, jobs=None, threads=None, force=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    out: PathBuf,
    to: String,
    several: bool,
    partition: bool,
    source: Option<String>,
    format: Option<String>,
    strict: bool,
    resync: bool,
    layouts: Vec<PathBuf>,
    opt: Option<&Bound<'py, PyAny>>,
    streams: Vec<String>,
    exclude_streams: Vec<String>,
    signals: Vec<String>,
    exclude_signals: Vec<String>,
    start: Option<&Bound<'py, PyAny>>,
    end: Option<&Bound<'py, PyAny>>,
    carry_last: bool,
    merge: Option<String>,
    max_rows: Option<u64>,
    upcast_f64: bool,
    time_column: Option<&str>,
    string_width: Option<u32>,
    batch_rows: usize,
    row_group_rows: usize,
    row_group_bytes: usize,
    row_group_memory: usize,
    byte_stream_split: bool,
    compression: &str,
    delimiter: &str,
    units_row: bool,
    jobs: Option<usize>,
    threads: Option<usize>,
    force: bool,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    for (name, value) in [
        ("batch_rows", batch_rows),
        ("row_group_rows", row_group_rows),
        ("row_group_bytes", row_group_bytes),
    ] {
        if value == 0 {
            return Err(invalid(format!("{name} must be at least 1")));
        }
    }
    if threads == Some(0) {
        return Err(invalid("threads must be at least 1".to_owned()));
    }
    let cancel = recfmt::Cancel::new();
    let options = recfmt::convert::ConvertOptions {
        open: recfmt::OpenOptions {
            format,
            strict,
            resync,
            layouts,
            format_options: format_options(opt)?,
            cancel: Some(cancel.clone()),
            threads,
        },
        target: to,
        compression: compression
            .parse()
            .map_err(|e: recfmt_export::Error| invalid(format!("compression: {e}")))?,
        batch_rows,
        row_group_rows,
        row_group_bytes,
        row_group_memory,
        byte_stream_split,
        delimiter: delimiter.to_owned(),
        units_row,
        streams,
        exclude_streams,
        signals,
        exclude_signals,
        start: time_text(start)?,
        end: time_text(end)?,
        carry_last,
        merge,
        max_rows,
        upcast_f64,
        time_column: time_column
            .map(|t| match t {
                "utc" => Ok(TimeSystem::Utc),
                "tai" => Ok(TimeSystem::Tai),
                "gps" => Ok(TimeSystem::Gps),
                other => Err(invalid(format!(
                    "time_column is \"utc\", \"tai\" or \"gps\", not {other:?}"
                ))),
            })
            .transpose()?,
        string_width,
        jobs,
        partition,
        source,
        // With this call only: other threads' conversions keep their own.
        force,
    };
    let registry = recfmt::default_registry();
    let out_existed = out.exists();
    let results = interruptible(py, &cancel, || {
        if several || partition || paths.len() != 1 {
            recfmt::convert::convert_many(registry, &paths, &out, &options, None)
        } else {
            Ok(vec![recfmt::convert::convert(
                registry, &paths[0], &out, &options, None,
            )])
        }
    });
    let results = match results {
        Ok(results) => results,
        Err(interrupted) => {
            if !out_existed {
                remove_empty_dirs(&out);
            }
            return Err(interrupted);
        }
    };
    let input_of = |i: usize| paths.get(i).map_or(out.as_path(), PathBuf::as_path);
    results
        .map_err(|e| facade_error(input_of(0), e))?
        .into_iter()
        .enumerate()
        .map(|(i, result)| match result {
            Ok(report) => Ok(report_dict(py, &report)?.into_any()),
            Err(error) => Ok(facade_error(input_of(i), error)
                .into_value(py)
                .into_bound(py)
                .into_any()),
        })
        .collect()
}
