//! `recfmt._recfmt`, the native half of the `recfmt` Python package.
//!
//! A recording is read through the same batch path as `recfmt convert`
//! ([`recfmt::Recording::stream_batches_with`]); the Arrow arrays cross into pyarrow through
//! the Arrow C data interface, so no value becomes a Python object and no buffer is copied.
//! Decoding runs with the GIL released; between batches the reader takes the GIL back just
//! long enough to see a pending Ctrl-C.

mod convert;
mod errors;
mod loss;
mod read;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::{IntoPyArrow, ToPyArrow};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use recfmt_core::{Header, ReadOptions, Schema};

use errors::{Kind, core_error, in_file, invalid, py_error};
use loss::OnLoss;
use read::{BatchState, BatchStream, ReadArgs, Source, StreamRead, names, time_bound};

/// Rows per record batch unless asked otherwise (as `recfmt convert`).
const DEFAULT_BATCH_ROWS: usize = 65_536;

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

/// `batches` as one `pyarrow.Table` of `schema`.
fn to_table<'py>(
    py: Python<'py>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyAny>> {
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        schema,
    ));
    reader.into_pyarrow(py)?.call_method0("read_all")
}

/// A recording opened for reading: its format, streams and schemas, and its streams as
/// Arrow tables. Each read opens the file again, so reads are independent.
#[pyclass(module = "recfmt", frozen)]
struct Recording {
    source: Source,
    header: Header,
    schema: Schema,
    format_name: &'static str,
}

impl Recording {
    /// Opens the read of `streams` (`None`: all) with `columns` and rows in `[start, end)`.
    #[allow(clippy::too_many_arguments)]
    fn open_read(
        &self,
        streams: Option<Vec<String>>,
        columns: Option<&Bound<'_, PyAny>>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        batch_rows: usize,
    ) -> PyResult<StreamRead> {
        let args = ReadArgs {
            streams,
            columns: names("columns", columns)?,
            start: time_bound(start)?,
            end: time_bound(end)?,
            batch_rows,
        };
        StreamRead::open(&self.source, &self.schema, args)
    }
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
        convert::info(py, &self.source.path, open_options(&self.source))
    }

    /// The `pyarrow.Schema` of `stream`: Arrow types that follow the source types, units in
    /// the field metadata (`unit`), provenance (`source.*`, `recfmt.*`) in the schema metadata.
    fn schema<'py>(&self, py: Python<'py>, stream: &str) -> PyResult<Bound<'py, PyAny>> {
        let wanted = [stream.to_owned()];
        let desc = read::select_streams(&self.source.path, &self.schema, Some(&wanted))?[0];
        let schema: SchemaRef = Arc::new(recfmt_export::arrow_schema_with(
            &self.header,
            desc,
            &self.source.provenance(&self.header),
        ));
        schema.to_pyarrow(py)
    }

    /// Reads `stream` into a `pyarrow.Table`. See the package documentation.
    #[pyo3(signature = (stream, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise"))]
    #[allow(clippy::too_many_arguments)]
    fn read<'py>(
        &self,
        py: Python<'py>,
        stream: &str,
        columns: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let on_loss = OnLoss::parse(on_loss)?;
        let mut read = self.open_read(
            Some(vec![stream.to_owned()]),
            columns,
            start,
            end,
            batch_rows,
        )?;
        let batches = read::read_to_end(py, &mut read)?;
        let (_, schema) = read.schemas().swap_remove(0);
        let table = to_table(py, schema, batches.into_iter().map(|(_, b)| b).collect())?;
        on_loss.report(py, &self.source.path, read.integrity(), Some(&table))?;
        Ok(table)
    }

    /// Reads several streams (`None`: every stream) in one pass over the file into a dict of
    /// `pyarrow.Table`s by stream name. `columns` keeps the signals it names in whichever
    /// stream has them (`stream.signal` names one stream's).
    #[pyo3(signature = (streams=None, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise"))]
    #[allow(clippy::too_many_arguments)]
    fn read_all<'py>(
        &self,
        py: Python<'py>,
        streams: Option<&Bound<'py, PyAny>>,
        columns: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let on_loss = OnLoss::parse(on_loss)?;
        let streams = names("streams", streams)?;
        let mut read = self.open_read(streams, columns, start, end, batch_rows)?;
        let mut batches = read::read_to_end(py, &mut read)?;
        let tables = PyDict::new(py);
        for (name, schema) in read.schemas() {
            let (mine, rest): (Vec<_>, Vec<_>) = batches.into_iter().partition(|(s, _)| *s == name);
            batches = rest;
            let table = to_table(py, schema, mine.into_iter().map(|(_, b)| b).collect())?;
            tables.set_item(name, table)?;
        }
        on_loss.report(
            py,
            &self.source.path,
            read.integrity(),
            Some(tables.as_any()),
        )?;
        Ok(tables)
    }

    /// Reads `stream` into a `pandas.DataFrame` (through `read`, then
    /// `pyarrow.Table.to_pandas(**kwargs)`).
    #[pyo3(signature = (stream, columns=None, start=None, end=None, *, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise", **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn to_pandas<'py>(
        &self,
        py: Python<'py>,
        stream: &str,
        columns: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.read(py, stream, columns, start, end, batch_rows, on_loss)?
            .call_method("to_pandas", (), kwargs)
    }

    /// Streams `stream` as `pyarrow.RecordBatch`es of at most `batch_rows` rows; or, with
    /// `streams=[...]` instead, several streams in one pass as `(stream, batch)` pairs.
    #[pyo3(signature = (stream=None, columns=None, start=None, end=None, *, streams=None, batch_rows=DEFAULT_BATCH_ROWS, on_loss="raise"))]
    #[allow(clippy::too_many_arguments)]
    fn batches<'py>(
        &self,
        stream: Option<&str>,
        columns: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        streams: Option<&Bound<'py, PyAny>>,
        batch_rows: usize,
        on_loss: &str,
    ) -> PyResult<BatchStream> {
        let on_loss = OnLoss::parse(on_loss)?;
        let streams = names("streams", streams)?;
        let (wanted, tagged) = match (stream, streams) {
            (Some(one), None) => (Some(vec![one.to_owned()]), false),
            (None, Some(several)) => (Some(several), true),
            _ => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "batches() takes one stream, batches(\"name\"), or several, \
                     batches(streams=[...]), not both or neither",
                ));
            }
        };
        let read = self.open_read(wanted, columns, start, end, batch_rows)?;
        Ok(BatchStream {
            schemas: read.schemas(),
            tagged,
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
    let reader = py
        .detach(|| source.open())
        .map_err(|e| core_error(&source.path, e))?;
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
        return Err(invalid(format!(
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
        .map_err(|e| errors::facade_error(&path, e))?;
    convert::from_json(py, &text)
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
    let registry = recfmt::default_registry();
    let format = py
        .detach(|| recfmt::format_of(registry, &path, &recfmt::OpenOptions::default()))
        .map_err(|e| errors::facade_error(&path, e))?;
    if format.info.id != "icarec" {
        return Err(py_error(
            Kind::Unsupported,
            in_file(
                &path,
                format!(
                    "state_at reads ICAREC recordings (random access to frames); this is a {} \
                     recording ({}): read it with recfmt.open(path).read(stream, start=t)",
                    format.info.name, format.info.id
                ),
            ),
        ));
    }
    let state = py
        .detach(|| -> recfmt_core::Result<_> {
            let options = recfmt_icarec::OpenOptions {
                verify: strict,
                ..Default::default()
            };
            let dir = recfmt_icarec::IcarecDir::open(&path, &options).in_file(&path)?;
            dir.state_at(t).in_file(&path)
        })
        .map_err(|e| core_error(&path, e))?
        .ok_or_else(|| {
            invalid(format!(
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

/// The name a recording at `path` gets in a partitioned dataset (its file or folder name
/// without the last extension).
#[pyfunction]
fn source_name(path: PathBuf) -> String {
    recfmt_export::source_name(&path)
}

/// The native module.
#[pymodule]
fn _recfmt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", recfmt::VERSION)?;
    m.add_class::<Recording>()?;
    m.add_class::<BatchStream>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(carla_query, m)?)?;
    m.add_function(wrap_pyfunction!(convert::validate, m)?)?;
    m.add_function(wrap_pyfunction!(state_at, m)?)?;
    m.add_function(wrap_pyfunction!(source_name, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert, m)?)?;
    Ok(())
}
