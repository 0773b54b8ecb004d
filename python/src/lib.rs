//! `recfmt._recfmt`, the native half of the `recfmt` Python package.
//!
//! A recording is read through the same batch path as `recfmt convert`
//! ([`recfmt::Recording::batches_with`], on [`recfmt_export::StreamBatchReader`]); the Arrow arrays
//! cross into pyarrow through the Arrow C data interface, so no value becomes a Python object
//! and no buffer is copied. Decoding runs with the GIL released; between batches the reader
//! takes the GIL back just long enough to see a pending Ctrl-C.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::{IntoPyArrow, ToPyArrow};
use arrow_schema::SchemaRef;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyStopIteration, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use recfmt_core::{
    ErrorKind, FormatOptions, Header, Integrity, Metadata, ReadOptions, RecordingReader, Schema,
    StreamDesc, TimeSystem,
};
use recfmt_export::TimeBound;

create_exception!(
    _recfmt,
    RecfmtError,
    PyException,
    "Base class of every error recfmt raises; the message is the one the command line prints."
);
create_exception!(
    _recfmt,
    UnknownFormatError,
    RecfmtError,
    "No format recognised the input (or the forced format id is unknown)."
);
create_exception!(
    _recfmt,
    MalformedError,
    RecfmtError,
    "The input breaks its format; the message names the file, the byte offset and what was expected."
);
create_exception!(
    _recfmt,
    UnsupportedError,
    RecfmtError,
    "The input uses something recfmt does not implement."
);
create_exception!(
    _recfmt,
    LimitError,
    RecfmtError,
    "A length or count in the input exceeds a configured limit."
);
create_exception!(
    _recfmt,
    DataLostError,
    RecfmtError,
    "The read finished, but input data was lost (a truncated or corrupt file). `integrity` holds \
     the report (as in `recfmt info --json`); `table` the complete rows that were read, when the \
     read built a table."
);
create_exception!(
    _recfmt,
    DataLostWarning,
    PyUserWarning,
    "Issued instead of DataLostError when a read is asked to warn on loss (`on_loss=\"warn\"`)."
);

/// Rows per record batch unless asked otherwise (as `recfmt convert`).
const DEFAULT_BATCH_ROWS: usize = 65_536;

/// A recfmt error as the Python exception of its kind.
fn to_py(error: recfmt_core::Error) -> PyErr {
    exception_of(error.kind(), error.to_string())
}

/// The Python exception of an error kind.
fn exception_of(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::UnknownFormat => UnknownFormatError::new_err(message),
        // A truncated input is a malformed one to Python, as it always was.
        ErrorKind::Malformed | ErrorKind::Truncated => MalformedError::new_err(message),
        ErrorKind::Unsupported => UnsupportedError::new_err(message),
        ErrorKind::Limit => LimitError::new_err(message),
        _ => RecfmtError::new_err(message),
    }
}

fn export_error(error: recfmt_export::Error) -> PyErr {
    to_py(error.into())
}

/// The integrity report as `recfmt info --json` prints it.
fn integrity_dict<'py>(py: Python<'py>, integrity: &Integrity) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("status", integrity.status.name())?;
    dict.set_item("bytes_lost", integrity.bytes_lost)?;
    dict.set_item("truncated_at", integrity.truncated_at)?;
    dict.set_item("records_skipped", integrity.records_skipped)?;
    dict.set_item("warnings", integrity.warnings.clone())?;
    Ok(dict)
}

/// One line saying what was lost, like the command line's report.
fn loss_message(path: &Path, integrity: &Integrity) -> String {
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

/// A front-door error as the Python exception of its kind, with the full message.
fn facade_error(error: recfmt::Error) -> PyErr {
    exception_of(error.kind(), chain_message(&error))
}

/// The front door's options for a recording opened as `source` says.
fn open_options(source: &Source) -> recfmt::OpenOptions {
    recfmt::OpenOptions {
        format: source.format.clone(),
        strict: source.options.strict,
        resync: source.options.resync,
        layouts: source.options.layouts.clone(),
        ..recfmt::OpenOptions::default()
    }
}

/// What to do when a read finishes with data lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnLoss {
    Raise,
    Warn,
    Ignore,
}

impl OnLoss {
    fn parse(text: &str) -> PyResult<Self> {
        match text {
            "raise" => Ok(OnLoss::Raise),
            "warn" => Ok(OnLoss::Warn),
            "ignore" => Ok(OnLoss::Ignore),
            other => Err(PyValueError::new_err(format!(
                "on_loss must be \"raise\", \"warn\" or \"ignore\", not {other:?}"
            ))),
        }
    }

    /// Raises or warns about a finished read's loss; `table` goes on the exception.
    fn report(
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
            let category = py.get_type::<DataLostWarning>();
            return PyErr::warn(py, &category, &std::ffi::CString::new(message)?, 2);
        }
        let error = DataLostError::new_err(message);
        let value = error.value(py);
        value.setattr("integrity", integrity_dict(py, integrity)?)?;
        value.setattr("table", table.map(|t| t.clone().unbind()))?;
        Err(error)
    }
}

/// How to open a recording again for each read.
#[derive(Debug, Clone)]
struct Source {
    path: PathBuf,
    format: Option<String>,
    options: ReadOptions,
}

impl Source {
    fn open(&self) -> recfmt_core::Result<Box<dyn RecordingReader>> {
        recfmt::default_registry().open_path(&self.path, self.format.as_deref(), &self.options)
    }

    /// The provenance entries every table of this recording carries (as exports do, without
    /// the input's SHA-256, which would cost a second read).
    fn provenance(&self, header: &Header) -> Metadata {
        let mut meta = Metadata::new();
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

/// The Arrow schema of `desc` with `extra` schema metadata.
fn table_schema(header: &Header, desc: &StreamDesc, extra: &Metadata) -> SchemaRef {
    Arc::new(recfmt_export::arrow_schema_with(header, desc, extra))
}

/// A time bound from Python: seconds on the recording's axis, or text such as `"+12.5s"` or an
/// RFC 3339 instant.
fn time_bound(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<TimeBound>> {
    match time_arg(value)? {
        None => Ok(None),
        Some(TimeArg::Seconds(seconds)) => Ok(Some(TimeBound::Absolute(seconds))),
        Some(TimeArg::Text(text)) => TimeBound::parse(&text).map(Some).map_err(to_py),
    }
}

/// A time argument from Python: finite seconds or a text the command line's syntax reads.
enum TimeArg {
    Seconds(f64),
    Text(String),
}

/// `None` (or Python `None`), finite seconds, or text; NaN and infinities are refused.
fn time_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<TimeArg>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(seconds) = value.extract::<f64>() {
        if !seconds.is_finite() {
            return Err(PyValueError::new_err(format!("bad time {seconds}")));
        }
        return Ok(Some(TimeArg::Seconds(seconds)));
    }
    Ok(Some(TimeArg::Text(value.extract()?)))
}

/// One stream of one recording being read batch by batch.
struct StreamRead {
    batches: recfmt::Batches,
}

impl StreamRead {
    /// Opens `stream` with only `columns` (the time column always) and rows in `[start, end)`.
    fn open(
        source: &Source,
        stream: &str,
        columns: Option<Vec<String>>,
        start: Option<TimeBound>,
        end: Option<TimeBound>,
        batch_rows: usize,
    ) -> PyResult<Self> {
        if batch_rows == 0 {
            return Err(PyValueError::new_err("batch_rows must be at least 1"));
        }
        let reader = source.open().map_err(to_py)?;
        let options = recfmt::BatchOptions {
            columns: columns.unwrap_or_default(),
            start,
            end,
            batch_rows,
            metadata: source.provenance(reader.header()),
        };
        let batches = recfmt::Recording::new(&source.path, reader)
            .batches_with(stream, &options)
            .map_err(facade_error)?;
        Ok(StreamRead { batches })
    }

    /// The schema of every batch.
    fn schema(&self) -> SchemaRef {
        self.batches.schema()
    }

    /// What the read has lost; final once `next_batch` has returned `None`.
    fn integrity(&self) -> &Integrity {
        self.batches.integrity()
    }

    /// The next record batch, or `None` at the end.
    fn next_batch(&mut self) -> recfmt::Result<Option<RecordBatch>> {
        self.batches.next_batch()
    }
}

fn no_such_stream(schema: &Schema, stream: &str) -> PyErr {
    let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
    RecfmtError::new_err(format!(
        "no stream {stream:?} (streams: {})",
        names.join(", ")
    ))
}

/// Why a read without the GIL stopped early.
enum Stop {
    Read(recfmt::Error),
    Interrupted(PyErr),
}

/// Reads every batch of `read` with the GIL released, checking for Ctrl-C between batches.
fn read_all(py: Python<'_>, read: &mut StreamRead) -> PyResult<Vec<RecordBatch>> {
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
        Stop::Read(e) => facade_error(e),
        Stop::Interrupted(e) => e,
    })
}

/// A recording opened for reading: its format, streams and schemas, and its streams as
/// Arrow tables. Each read opens the file again, so reads are independent.
#[pyclass(module = "recfmt._recfmt", frozen)]
struct Recording {
    source: Source,
    header: Header,
    schema: Schema,
    format_name: &'static str,
}

#[pymethods]
impl Recording {
    /// The path the recording was opened from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.source.path.clone()
    }

    /// The format id (`usvlog`, `carla`, `fgtape`, `icarec`, `icarus-h5`, `nanover`).
    #[getter]
    fn format(&self) -> &'static str {
        self.header.format
    }

    /// The format's full name.
    #[getter]
    fn format_name(&self) -> &'static str {
        self.format_name
    }

    /// The format version the recording declares.
    #[getter]
    fn version(&self) -> String {
        self.header.version.clone()
    }

    /// The stream names, in schema order.
    #[getter]
    fn streams(&self) -> Vec<String> {
        self.schema.streams.iter().map(|s| s.name.clone()).collect()
    }

    /// What the recording says about itself (the header metadata).
    #[getter]
    fn metadata(&self) -> std::collections::BTreeMap<String, String> {
        self.header
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Reads the recording once and returns the same dict as `recfmt info --json`: `format`,
    /// `version`, `streams` (rows, signals, rates, time span), `time`, `integrity`, ...
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let options = open_options(&self.source);
        let text = py
            .detach(|| {
                recfmt::inspect::info(recfmt::default_registry(), &self.source.path, &options)
                    .map(|report| report.to_json())
            })
            .map_err(facade_error)?;
        from_json(py, &text)
    }

    /// The `pyarrow.Schema` of `stream`: Arrow types that follow the source types, units in
    /// the field metadata (`unit`), provenance (`source.*`, `recfmt.*`) in the schema metadata.
    fn schema<'py>(&self, py: Python<'py>, stream: &str) -> PyResult<Bound<'py, PyAny>> {
        let desc = self
            .schema
            .streams
            .iter()
            .find(|s| s.name == stream)
            .ok_or_else(|| no_such_stream(&self.schema, stream))?;
        table_schema(&self.header, desc, &self.source.provenance(&self.header)).to_pyarrow(py)
    }

    /// Reads `stream` into a `pyarrow.Table`. See the package documentation.
    #[pyo3(signature = (stream, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise"))]
    #[allow(clippy::too_many_arguments)]
    fn read<'py>(
        &self,
        py: Python<'py>,
        stream: &str,
        columns: Option<Vec<String>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let on_loss = OnLoss::parse(on_loss)?;
        let mut read = StreamRead::open(
            &self.source,
            stream,
            columns,
            time_bound(start)?,
            time_bound(end)?,
            batch_rows,
        )?;
        let batches = read_all(py, &mut read)?;
        let schema = read.schema();
        let reader: Box<dyn RecordBatchReader + Send> = Box::new(RecordBatchIterator::new(
            batches.into_iter().map(Ok),
            schema,
        ));
        let table = reader.into_pyarrow(py)?.call_method0("read_all")?;
        on_loss.report(py, &self.source.path, read.integrity(), Some(&table))?;
        Ok(table)
    }

    /// Reads `stream` into a `pandas.DataFrame` (through `read`, then
    /// `pyarrow.Table.to_pandas(**kwargs)`).
    #[pyo3(signature = (stream, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise", **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn to_pandas<'py>(
        &self,
        py: Python<'py>,
        stream: &str,
        columns: Option<Vec<String>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.read(py, stream, columns, start, end, batch_rows, on_loss)?
            .call_method("to_pandas", (), kwargs)
    }

    /// Streams `stream` as `pyarrow.RecordBatch`es of at most `batch_rows` rows.
    #[pyo3(signature = (stream, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise"))]
    #[allow(clippy::too_many_arguments)]
    fn batches<'py>(
        &self,
        stream: &str,
        columns: Option<Vec<String>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
    ) -> PyResult<BatchStream> {
        let on_loss = OnLoss::parse(on_loss)?;
        let read = StreamRead::open(
            &self.source,
            stream,
            columns,
            time_bound(start)?,
            time_bound(end)?,
            batch_rows,
        )?;
        Ok(BatchStream {
            schema: read.schema(),
            path: self.source.path.clone(),
            on_loss,
            state: Mutex::new(BatchState {
                read: Some(read),
                integrity: None,
            }),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<recfmt.Recording {:?} format={} version={} streams={}>",
            self.source.path.display().to_string(),
            self.header.format,
            self.header.version,
            self.schema.streams.len()
        )
    }
}

struct BatchState {
    /// `None` once the stream has ended (or failed).
    read: Option<StreamRead>,
    integrity: Option<Integrity>,
}

/// An iterator of `pyarrow.RecordBatch`es over one stream, holding at most one batch at a
/// time. Also an Arrow stream (`__arrow_c_stream__`), so `pyarrow.RecordBatchReader.from_stream`,
/// `polars.from_arrow` and DuckDB consume it directly.
#[pyclass(module = "recfmt._recfmt", frozen)]
struct BatchStream {
    schema: SchemaRef,
    path: PathBuf,
    on_loss: OnLoss,
    state: Mutex<BatchState>,
}

#[pymethods]
impl BatchStream {
    /// The `pyarrow.Schema` of every batch.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.schema.to_pyarrow(py)
    }

    /// The integrity report (a dict, as in `recfmt info --json`) once the stream has ended,
    /// else `None`.
    #[getter]
    fn integrity<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let state = self.lock()?;
        state
            .integrity
            .as_ref()
            .map(|i| integrity_dict(py, i))
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
            Ok(Some(batch)) => batch.to_pyarrow(py),
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
                Err(facade_error(e))
            }
        }
    }

    /// The rest of the stream as a `pyarrow.RecordBatchReader`.
    fn to_reader<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let schema = slf.get().schema.to_pyarrow(py)?;
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

    /// The rest of the stream as one `pyarrow.Table`.
    fn read_all<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::to_reader(slf)?.call_method0("read_all")
    }
}

impl BatchStream {
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, BatchState>> {
        self.state
            .lock()
            .map_err(|_| RecfmtError::new_err("a previous read of this stream panicked"))
    }
}

/// Opens a recording; see `recfmt.open`.
#[pyfunction]
#[pyo3(signature = (path, format=None, strict=false, layouts=Vec::new(), *, resync=false))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    strict: bool,
    layouts: Vec<PathBuf>,
    resync: bool,
) -> PyResult<Recording> {
    let source = Source {
        path,
        format,
        options: ReadOptions {
            strict,
            resync,
            layouts,
            ..ReadOptions::default()
        },
    };
    let reader = py.detach(|| source.open()).map_err(to_py)?;
    Ok(Recording {
        header: reader.header().clone(),
        schema: reader.schema().clone(),
        format_name: reader.format().name,
        source,
    })
}

/// Every format of this build: a list of dicts with `id`, `name`, `extensions`, `write`.
#[pyfunction]
fn formats(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for f in recfmt::default_registry().formats() {
        let dict = PyDict::new(py);
        dict.set_item("id", f.info.id)?;
        dict.set_item("name", f.info.name)?;
        dict.set_item("extensions", f.info.extensions.to_vec())?;
        dict.set_item("write", f.create.is_some())?;
        list.append(dict)?;
    }
    Ok(list)
}

/// A JSON text as Python objects.
fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// Reads a recording completely with its format's own checks and returns the report dict of
/// `recfmt validate --json`; see `recfmt.validate`.
#[pyfunction]
#[pyo3(signature = (path, *, against=None, format=None, strict=false, layouts=Vec::new(), resync=false))]
fn validate<'py>(
    py: Python<'py>,
    path: PathBuf,
    against: Option<PathBuf>,
    format: Option<String>,
    strict: bool,
    layouts: Vec<PathBuf>,
    resync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let options = recfmt::validate::ValidateOptions {
        open: recfmt::OpenOptions {
            format,
            strict,
            resync,
            layouts,
            ..recfmt::OpenOptions::default()
        },
        against,
    };
    let text = py
        .detach(|| {
            recfmt::validate::validate(recfmt::default_registry(), &path, &options)
                .map(|report| report.to_json())
        })
        .map_err(facade_error)?;
    from_json(py, &text)
}

/// CARLA's own queries over a recorder log; see `recfmt.carla_query`.
#[pyfunction]
#[pyo3(signature = (path, query, *, type1='a', type2='a', min_time=60.0, min_distance=100.0))]
fn carla_query<'py>(
    py: Python<'py>,
    path: PathBuf,
    query: &str,
    type1: char,
    type2: char,
    min_time: f64,
    min_distance: f64,
) -> PyResult<Bound<'py, PyAny>> {
    if !["info", "collisions", "blocked"].contains(&query) {
        return Err(PyValueError::new_err(format!(
            "unknown CARLA query {query:?} (expected \"info\", \"collisions\" or \"blocked\")"
        )));
    }
    let mut params = recfmt_core::FormatOptions::new();
    match query {
        "collisions" => {
            params.push("type1", type1.to_string());
            params.push("type2", type2.to_string());
        }
        "blocked" => {
            params.push("min_time", min_time.to_string());
            params.push("min_distance", min_distance.to_string());
        }
        _ => {}
    }
    let text = py
        .detach(|| {
            recfmt::ops::query_text(
                recfmt::default_registry(),
                "carla",
                query,
                &path,
                &params,
                recfmt_core::QueryForm::Json,
            )
        })
        .map_err(facade_error)?;
    from_json(py, &text)
}

/// The state of every signal of an ICAREC recording at time `t`; see `recfmt.state_at`.
#[pyfunction]
#[pyo3(signature = (path, t, *, strict=false))]
fn state_at<'py>(
    py: Python<'py>,
    path: PathBuf,
    t: f64,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    use recfmt_core::ResultExt;
    use recfmt_icarec::SignalValue;
    let state = py
        .detach(|| -> recfmt_core::Result<_> {
            let options = recfmt_icarec::OpenOptions {
                verify: strict,
                ..Default::default()
            };
            let dir = recfmt_icarec::IcarecDir::open(&path, &options).in_file(&path)?;
            dir.state_at(t).in_file(&path)
        })
        .map_err(to_py)?
        .ok_or_else(|| {
            RecfmtError::new_err(format!(
                "no frame at or before t = {t} s in {}",
                path.display()
            ))
        })?;
    let values = PyDict::new(py);
    for (name, value) in &state.values {
        match value {
            SignalValue::Double(v) => values.set_item(name, v)?,
            SignalValue::Int64(v) => values.set_item(name, v)?,
            SignalValue::Int32(v) => values.set_item(name, v)?,
            SignalValue::Bool(v) => values.set_item(name, v)?,
            SignalValue::Vec3(v) => values.set_item(name, v.to_vec())?,
            SignalValue::Quat(v) => values.set_item(name, v.to_vec())?,
            SignalValue::Mat3(v) => values.set_item(name, v.to_vec())?,
        }
    }
    let dict = PyDict::new(py);
    dict.set_item("t", state.t)?;
    dict.set_item("frame", state.frame)?;
    dict.set_item("values", values)?;
    Ok(dict)
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
    if let Ok(map) = value.cast::<PyDict>() {
        for (key, value) in map.iter() {
            options.push(key.str()?.to_string(), value.str()?.to_string());
        }
    } else if let Ok(text) = value.extract::<String>() {
        options.push_pair(&text).map_err(to_py)?;
    } else {
        for pair in value.try_iter()? {
            options
                .push_pair(&pair?.extract::<String>()?)
                .map_err(to_py)?;
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
        .map_err(|e| RecfmtError::new_err(e.to_string()))?;
    dict.set_item("integrity", from_json(py, &integrity)?)?;
    let files: Vec<(Option<String>, PathBuf, u64)> = report
        .files
        .iter()
        .map(|f| (f.stream.clone(), f.path.clone(), f.rows))
        .collect();
    dict.set_item("files", files)?;
    Ok(dict)
}

/// Converts recordings through the library's front door, exactly as `recfmt convert` does;
/// see `recfmt.convert`. Returns, per input in order, its report dict or the exception that
/// stopped it (the other inputs are still converted, as on the command line).
#[pyfunction]
#[pyo3(signature = (paths, out, to, *, several=false, partition=false, source=None, format=None, strict=false, resync=false, layouts=Vec::new(), opt=None, streams=Vec::new(), exclude_streams=Vec::new(), signals=Vec::new(), exclude_signals=Vec::new(), start=None, end=None, carry_last=false, merge=None, max_rows=None, upcast_f64=false, time_column=None, string_width=None, batch_rows=DEFAULT_BATCH_ROWS, compression="zstd", delimiter=",", units_row=false, jobs=None, force=false))]
#[allow(clippy::too_many_arguments)]
fn convert<'py>(
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
    compression: &str,
    delimiter: &str,
    units_row: bool,
    jobs: Option<usize>,
    force: bool,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if batch_rows == 0 {
        return Err(PyValueError::new_err("batch_rows must be at least 1"));
    }
    let options = recfmt::convert::ConvertOptions {
        open: recfmt::OpenOptions {
            format,
            strict,
            resync,
            layouts,
            format_options: format_options(opt)?,
        },
        target: to,
        compression: compression.parse().map_err(export_error)?,
        batch_rows,
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
                other => Err(PyValueError::new_err(format!(
                    "time_column is utc, tai or gps, not {other:?}"
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
    let results = py.detach(|| {
        if several || partition || paths.len() != 1 {
            recfmt::convert::convert_many(registry, &paths, &out, &options, None)
        } else {
            Ok(vec![recfmt::convert::convert(
                registry, &paths[0], &out, &options, None,
            )])
        }
    });
    results
        .map_err(facade_error)?
        .into_iter()
        .map(|result| match result {
            Ok(report) => Ok(report_dict(py, &report)?.into_any()),
            Err(error) => Ok(facade_error(error).into_value(py).into_bound(py).into_any()),
        })
        .collect()
}

/// The name a recording at `path` gets in a partitioned dataset (its file or folder name
/// without the last extension).
#[pyfunction]
fn source_name(path: PathBuf) -> String {
    recfmt_export::source_name(&path)
}

/// The native module.
#[pymodule]
fn _recfmt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RecfmtError", py.get_type::<RecfmtError>())?;
    m.add("UnknownFormatError", py.get_type::<UnknownFormatError>())?;
    m.add("MalformedError", py.get_type::<MalformedError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("DataLostError", py.get_type::<DataLostError>())?;
    m.add("DataLostWarning", py.get_type::<DataLostWarning>())?;
    m.add("__version__", recfmt::VERSION)?;
    m.add_class::<Recording>()?;
    m.add_class::<BatchStream>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(carla_query, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(state_at, m)?)?;
    m.add_function(wrap_pyfunction!(source_name, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    Ok(())
}
