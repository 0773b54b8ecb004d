//! Reading streams as Arrow: the arguments a read takes (streams, columns, time bounds), the
//! read itself (one pass over the file for any number of streams) and the batch iterator.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_pyarrow::ToPyArrow;
use arrow_schema::SchemaRef;
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use recfmt_core::{Integrity, ReadOptions, RecordingReader, Schema, StreamDesc};
use recfmt_export::{Pattern, Selection, TimeBound};

use crate::errors::{Kind, facade_error, in_file, invalid, py_error};
use crate::loss::OnLoss;

/// How to open a recording again for each read.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub(crate) path: PathBuf,
    pub(crate) format: Option<String>,
    pub(crate) options: ReadOptions,
}

impl Source {
    pub(crate) fn open(&self) -> recfmt_core::Result<Box<dyn RecordingReader>> {
        recfmt::default_registry().open_path(&self.path, self.format.as_deref(), &self.options)
    }

    /// The provenance entries every table of this recording carries (as exports do, without
    /// the input's SHA-256, which would cost a second read).
    pub(crate) fn provenance(&self, header: &recfmt_core::Header) -> recfmt_core::Metadata {
        let mut meta = recfmt_core::Metadata::new();
        let file = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        meta.insert("source.file".into(), file);
        meta.insert("source.path".into(), self.path.display().to_string());
        meta.insert("source.format".into(), header.format.to_string());
        meta.insert("source.version".into(), header.version.clone());
        meta.insert("recfmt.recfmt_version".into(), recfmt::VERSION.into());
        meta
    }
}

/// Names given as one text or a sequence of texts (`columns="x"` or `columns=["x", "y"]`).
pub(crate) fn names(what: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Some(vec![text.to_cow()?.into_owned()]));
    }
    let wrong = || {
        let type_name = value
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        PyTypeError::new_err(format!(
            "{what} must be a name or a list of names, not {type_name}"
        ))
    };
    let mut out = Vec::new();
    for item in value.try_iter().map_err(|_| wrong())? {
        let item = item?;
        let text = item.cast::<PyString>().map_err(|_| wrong())?;
        out.push(text.to_cow()?.into_owned());
    }
    Ok(Some(out))
}

/// The streams of `schema` called `wanted` (every stream for `None`), in the recording's
/// order; a name it lacks is a `KeyError`.
pub(crate) fn select_streams<'a>(
    path: &Path,
    schema: &'a Schema,
    wanted: Option<&[String]>,
) -> PyResult<Vec<&'a StreamDesc>> {
    let Some(wanted) = wanted else {
        return Ok(schema.streams.iter().collect());
    };
    if wanted.is_empty() {
        return Err(invalid("streams is empty: name at least one stream"));
    }
    for name in wanted {
        if schema.stream_index(name).is_none() {
            let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
            return Err(py_error(
                Kind::NoStream,
                in_file(
                    path,
                    format!("no stream {name:?} (streams: {})", names.join(", ")),
                ),
            ));
        }
    }
    Ok(schema
        .streams
        .iter()
        .filter(|s| wanted.contains(&s.name))
        .collect())
}

/// The columns `specs` name in `streams`, as exact names the reader selects by: a signal or
/// composite name, `stream.signal`, or a pattern (`*`, `?`, `re:`) standing for every signal
/// it matches. A spec that matches nothing is a `KeyError`.
pub(crate) fn select_columns(
    path: &Path,
    streams: &[&StreamDesc],
    specs: &[String],
) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    for spec in specs {
        let is_pattern = spec.starts_with("re:") || spec.contains(['*', '?']);
        let pattern = if is_pattern {
            Pattern::parse(spec).map_err(|e| invalid(format!("columns: {e}")))?
        } else {
            Pattern::Exact(spec.clone())
        };
        let selection = Selection {
            signals: vec![pattern],
            ..Selection::default()
        };
        let before = out.len();
        for desc in streams {
            for signal in &desc.signals {
                if selection.keeps_signal(&desc.name, &signal.name) {
                    // A pattern becomes the names it matches, qualified by stream so it
                    // keeps nothing in another stream.
                    let name = if is_pattern {
                        format!("{}.{}", desc.name, signal.name)
                    } else {
                        spec.clone()
                    };
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
            }
        }
        if out.len() == before && !out.contains(spec) {
            let described = match streams {
                [desc] => {
                    let names: Vec<&str> = desc.signals.iter().map(|s| s.name.as_str()).collect();
                    format!(
                        "stream {:?} has no column {spec:?} (columns: {})",
                        desc.name,
                        names.join(", ")
                    )
                }
                _ => format!("none of the streams read has a column {spec:?}"),
            };
            return Err(py_error(Kind::NoColumn, in_file(path, described)));
        }
    }
    Ok(out)
}

/// A time bound from Python: seconds on the recording's axis, or text such as `"+12.5s"` or an
/// RFC 3339 instant.
pub(crate) fn time_bound(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<TimeBound>> {
    match time_arg(value)? {
        None => Ok(None),
        Some(TimeArg::Seconds(seconds)) => Ok(Some(TimeBound::Absolute(seconds))),
        Some(TimeArg::Text(text)) => TimeBound::parse(&text)
            .map(Some)
            .map_err(|e| invalid(e.to_string())),
    }
}

/// A time argument from Python: finite seconds or a text the command line's syntax reads.
pub(crate) enum TimeArg {
    Seconds(f64),
    Text(String),
}

/// `None` (or Python `None`), finite seconds, or text; NaN and infinities are refused.
pub(crate) fn time_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<TimeArg>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(seconds) = value.extract::<f64>() {
        if !seconds.is_finite() {
            return Err(invalid(format!(
                "a time must be a finite number of seconds, not {seconds}"
            )));
        }
        return Ok(Some(TimeArg::Seconds(seconds)));
    }
    match value.cast::<PyString>() {
        Ok(text) => Ok(Some(TimeArg::Text(text.to_cow()?.into_owned()))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "a time is seconds (a number) or text such as \"+12.5s\", not {}",
            value.get_type().name()?
        ))),
    }
}

/// What a read asks for: which streams, columns and rows, in batches of how many rows.
pub(crate) struct ReadArgs {
    pub(crate) streams: Option<Vec<String>>,
    pub(crate) columns: Option<Vec<String>>,
    pub(crate) start: Option<TimeBound>,
    pub(crate) end: Option<TimeBound>,
    pub(crate) batch_rows: usize,
}

/// Some streams of one recording being read batch by batch, in one pass over the file.
pub(crate) struct StreamRead {
    batches: recfmt::StreamBatches,
}

impl StreamRead {
    /// Opens the read `args` describe; names are checked against `schema` first, so a wrong
    /// one is a `KeyError` before anything is read.
    pub(crate) fn open(source: &Source, schema: &Schema, args: ReadArgs) -> PyResult<Self> {
        if args.batch_rows == 0 {
            return Err(invalid("batch_rows must be at least 1"));
        }
        let streams = select_streams(&source.path, schema, args.streams.as_deref())?;
        let columns = match &args.columns {
            Some(specs) => select_columns(&source.path, &streams, specs)?,
            None => Vec::new(),
        };
        let names: Vec<&str> = streams.iter().map(|s| s.name.as_str()).collect();
        let reader = source
            .open()
            .map_err(|e| crate::errors::core_error(&source.path, e))?;
        let options = recfmt::BatchOptions {
            columns,
            start: args.start,
            end: args.end,
            batch_rows: args.batch_rows,
            metadata: source.provenance(reader.header()),
        };
        let batches = recfmt::Recording::new(&source.path, reader)
            .stream_batches_with(&names, &options)
            .map_err(|e| facade_error(&source.path, e))?;
        Ok(StreamRead { batches })
    }

    /// The streams read and their schemas, in the recording's order.
    pub(crate) fn schemas(&self) -> Vec<(String, SchemaRef)> {
        self.batches
            .streams()
            .map(|(name, schema)| (name.to_owned(), schema.clone()))
            .collect()
    }

    /// What the read has lost; final once `next_batch` has returned `None`.
    pub(crate) fn integrity(&self) -> &Integrity {
        self.batches.integrity()
    }

    pub(crate) fn path(&self) -> &Path {
        self.batches.path()
    }

    /// The next record batch and its stream, or `None` at the end.
    pub(crate) fn next_batch(&mut self) -> recfmt::Result<Option<(String, RecordBatch)>> {
        self.batches.next_batch()
    }
}

/// Why a read without the GIL stopped early.
enum Stop {
    Read(recfmt::Error),
    Interrupted(PyErr),
}

/// Reads every batch of `read` with the GIL released, checking for Ctrl-C between batches.
pub(crate) fn read_to_end(
    py: Python<'_>,
    read: &mut StreamRead,
) -> PyResult<Vec<(String, RecordBatch)>> {
    let outcome = py.detach(|| {
        let mut out = Vec::new();
        loop {
            Python::attach(|py| py.check_signals()).map_err(Stop::Interrupted)?;
            match read.next_batch().map_err(Stop::Read)? {
                Some(batch) => out.push(batch),
                None => return Ok(out),
            }
        }
    });
    outcome.map_err(|stop| match stop {
        Stop::Read(e) => facade_error(read.path(), e),
        Stop::Interrupted(e) => e,
    })
}

pub(crate) struct BatchState {
    /// `None` once the read has ended (or failed).
    pub(crate) read: Option<StreamRead>,
    pub(crate) integrity: Option<Integrity>,
}

/// An iterator of `pyarrow.RecordBatch`es over one stream (`rec.batches("s")`), or of
/// `(stream, batch)` pairs over several read in one pass (`rec.batches(streams=[...])`),
/// holding at most one batch at a time. One stream's is also an Arrow stream
/// (`__arrow_c_stream__`), so `pyarrow.RecordBatchReader.from_stream`, `polars` and DuckDB
/// consume it directly.
#[pyclass(module = "recfmt", frozen)]
pub(crate) struct BatchStream {
    /// The streams read and their schemas.
    pub(crate) schemas: Vec<(String, SchemaRef)>,
    /// Whether each batch comes with its stream's name.
    pub(crate) tagged: bool,
    pub(crate) path: PathBuf,
    pub(crate) on_loss: OnLoss,
    pub(crate) state: Mutex<BatchState>,
}

#[pymethods]
impl BatchStream {
    /// The `pyarrow.Schema` of every batch (one stream's read only).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.single_schema()?.to_pyarrow(py)
    }

    /// Each stream's `pyarrow.Schema`, by stream name.
    #[getter]
    fn schemas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, schema) in &self.schemas {
            dict.set_item(name, schema.to_pyarrow(py)?)?;
        }
        Ok(dict)
    }

    /// The integrity report (a dict, as in `recfmt info --json`) once the read has ended,
    /// else `None`.
    #[getter]
    fn integrity<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let state = self.lock()?;
        state
            .integrity
            .as_ref()
            .map(|i| crate::loss::integrity_dict(py, i))
            .transpose()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.check_signals()?;
        let mut state = self.lock()?;
        let Some(read) = state.read.as_mut() else {
            return Err(PyStopIteration::new_err(()));
        };
        let next = py.detach(|| read.next_batch());
        match next {
            Ok(Some((stream, batch))) => {
                let batch = batch.to_pyarrow(py)?;
                if self.tagged {
                    Ok(PyTuple::new(py, [stream.into_pyobject(py)?.into_any(), batch])?.into_any())
                } else {
                    Ok(batch)
                }
            }
            Ok(None) => {
                let integrity = read.integrity().clone();
                state.read = None;
                state.integrity = Some(integrity.clone());
                drop(state);
                self.on_loss.report(py, &self.path, &integrity, None)?;
                Err(PyStopIteration::new_err(()))
            }
            Err(e) => {
                state.read = None;
                Err(facade_error(&self.path, e))
            }
        }
    }

    /// The rest of the stream as a `pyarrow.RecordBatchReader` (one stream's read only).
    fn to_reader<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let schema = slf.get().single_schema()?.to_pyarrow(py)?;
        py.import("pyarrow")?
            .getattr("RecordBatchReader")?
            .call_method1("from_batches", (schema, slf))
    }

    /// The Arrow PyCapsule stream protocol: the rest of the stream.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        slf: &Bound<'py, Self>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::to_reader(slf)?.call_method1("__arrow_c_stream__", (requested_schema,))
    }

    /// The rest of the stream as one `pyarrow.Table` (one stream's read only).
    fn read_all<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::to_reader(slf)?.call_method0("read_all")
    }
}

impl BatchStream {
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, BatchState>> {
        self.state
            .lock()
            .map_err(|_| py_error(Kind::Other, "a previous read of this stream panicked"))
    }

    fn single_schema(&self) -> PyResult<&SchemaRef> {
        match (self.tagged, self.schemas.as_slice()) {
            (false, [(_, schema)]) => Ok(schema),
            _ => Err(PyTypeError::new_err(
                "batches(streams=[...]) yields (stream, batch) pairs of several schemas: use \
                 .schemas, or batches(stream) for one stream's Arrow stream",
            )),
        }
    }
}
