//! The mapping from recfmt streams onto Arrow schemas.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use recfmt_core::{DType, Header, Metadata, Shape, SignalDesc, StreamDesc};

/// Field metadata key holding the physical unit of a signal.
pub const UNIT_KEY: &str = "unit";
/// Schema metadata key holding the name of the stream a table holds.
pub const STREAM_KEY: &str = "recfmt.stream";
/// Field metadata key holding the recfmt dtype name (`"f32"`, `"u8"`, ...).
pub const DTYPE_KEY: &str = "recfmt.dtype";
/// Field metadata key holding the dimensions of a fixed-shape signal (`"3"`, `"3x3"`).
pub const SHAPE_KEY: &str = "recfmt.shape";

/// The Arrow type of one element of a signal of this dtype.
///
/// The mapping is one to one: `f32` stays `Float32`, `u8` stays `UInt8`.
///
/// ```
/// use arrow_schema::DataType;
/// use recfmt_core::DType;
/// assert_eq!(recfmt_export::arrow_type(DType::F32), DataType::Float32);
/// assert_eq!(recfmt_export::arrow_type(DType::Bytes), DataType::Binary);
/// ```
pub fn arrow_type(dtype: DType) -> DataType {
    match dtype {
        DType::Bool => DataType::Boolean,
        DType::I8 => DataType::Int8,
        DType::I16 => DataType::Int16,
        DType::I32 => DataType::Int32,
        DType::I64 => DataType::Int64,
        DType::U8 => DataType::UInt8,
        DType::U16 => DataType::UInt16,
        DType::U32 => DataType::UInt32,
        DType::U64 => DataType::UInt64,
        DType::F32 => DataType::Float32,
        DType::F64 => DataType::Float64,
        DType::Str => DataType::Utf8,
        DType::Bytes => DataType::Binary,
        // `DType` is non-exhaustive; a dtype added later is declared as opaque bytes until
        // this mapping learns it (its values are rejected by the batcher).
        _ => DataType::Binary,
    }
}

/// The Arrow type of a whole signal: its element type, wrapped in a `FixedSizeList` for fixed
/// shapes or a `List` for variable shapes.
///
/// A fixed shape whose element count does not fit an `i32` becomes a `List`.
pub fn signal_type(signal: &SignalDesc) -> DataType {
    let element = arrow_type(signal.dtype);
    match &signal.shape {
        Shape::Scalar => element,
        Shape::Fixed(_) => match signal
            .shape
            .element_count()
            .and_then(|n| i32::try_from(n).ok())
        {
            Some(n) => DataType::FixedSizeList(Arc::new(Field::new_list_field(element, true)), n),
            None => DataType::List(Arc::new(Field::new_list_field(element, true))),
        },
        Shape::Variable => DataType::List(Arc::new(Field::new_list_field(element, true))),
    }
}

/// Formats fixed dimensions as `"3"` or `"3x3"`.
pub(crate) fn shape_text(dims: &[u32]) -> String {
    dims.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// Parses the value of [`SHAPE_KEY`] back into dimensions.
#[cfg(feature = "csv")]
pub(crate) fn parse_shape(text: &str) -> Option<Vec<u32>> {
    text.split('x').map(|d| d.trim().parse().ok()).collect()
}

fn prefixed(key: &str, prefix: &str) -> String {
    if key.starts_with(prefix) {
        key.to_owned()
    } else {
        format!("{prefix}{key}")
    }
}

/// The Arrow field of one signal, with its unit, dtype, shape and metadata, named after the
/// signal (a table names it by [`crate::column_names`]).
pub fn arrow_field(signal: &SignalDesc) -> Field {
    named_field(signal, &signal.name)
}

/// [`arrow_field`] named `name`.
fn named_field(signal: &SignalDesc, name: &str) -> Field {
    let mut meta = Metadata::new();
    for (k, v) in &signal.metadata {
        meta.insert(prefixed(k, "recfmt."), v.clone());
    }
    meta.insert(DTYPE_KEY.to_owned(), signal.dtype.name().to_owned());
    if let Shape::Fixed(dims) = &signal.shape {
        meta.insert(SHAPE_KEY.to_owned(), shape_text(dims));
    }
    if let Some(unit) = &signal.unit {
        meta.insert(UNIT_KEY.to_owned(), unit.clone());
    }
    Field::new(name, signal_type(signal), true).with_metadata(meta)
}

/// Schema-level metadata of a stream's table written with column `names` (see
/// [`crate::column_names`]), without the caller's extra entries.
pub(crate) fn stream_metadata(header: &Header, stream: &StreamDesc, names: &[String]) -> Metadata {
    let mut meta = Metadata::new();
    meta.insert("recfmt.format".into(), header.format.to_owned());
    meta.insert("recfmt.version".into(), header.version.clone());
    meta.insert(STREAM_KEY.into(), stream.name.clone());
    if let Some(time) = names.get(stream.time) {
        meta.insert("recfmt.time_column".into(), time.clone());
    }
    meta.insert(
        "recfmt.time_base".into(),
        format!("{}/{}", stream.time_base.numer, stream.time_base.denom),
    );
    if let Some(entity) = stream.entity.and_then(|i| names.get(i)) {
        meta.insert("recfmt.entity_column".into(), entity.clone());
    }
    if let Some(renamed) = crate::names::renamed_columns(stream, names) {
        meta.insert(crate::RENAMED_COLUMNS_KEY.into(), renamed);
    }
    if let Some(reference) = &header.time {
        meta.insert(
            "recfmt.time_system".into(),
            reference.system.name().to_owned(),
        );
        if let Some(epoch) = reference.to_rfc3339(0.0) {
            meta.insert("recfmt.epoch".into(), epoch);
        }
    }
    for (k, v) in &header.metadata {
        meta.insert(prefixed(k, "source."), v.clone());
    }
    for (k, v) in &stream.metadata {
        meta.insert(prefixed(k, "stream."), v.clone());
    }
    meta
}

/// The Arrow schema of one stream's table.
///
/// One nullable field per signal, in signal order, named by [`crate::column_names`] (a signal
/// whose name another column has, such as a signal `t` beside the time column `t`, becomes
/// `t_2`), typed as [`arrow_type`] says
/// (`FixedSizeList` for fixed shapes, `List` for variable ones). Field metadata: `unit` (when
/// the signal has one), `recfmt.dtype`, `recfmt.shape` (fixed shapes, `"3"` or `"3x3"`) and
/// the signal's own metadata with keys prefixed `recfmt.`. Schema metadata:
/// `recfmt.format`, `recfmt.version`, `recfmt.stream`, `recfmt.time_column`,
/// `recfmt.time_base` (seconds per unit, `"1/1000000"`), `recfmt.entity_column` (entity-keyed
/// streams), [`recfmt.renamed_columns`](crate::RENAMED_COLUMNS_KEY) (when a column was
/// renamed), `recfmt.time_system` and `recfmt.epoch` (RFC 3339, UTC) when the header has a
/// time reference, every header metadata entry prefixed `source.` and every stream metadata
/// entry prefixed `stream.`.
///
/// ```
/// use recfmt_core::{DType, Header, SignalDesc, StreamDesc, TimeBase};
/// let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
/// nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
/// let header = Header { format: "usvlog", version: "2".into(), ..Header::default() };
///
/// let schema = recfmt_export::arrow_schema(&header, &nav);
/// assert_eq!(schema.field(1).data_type(), &arrow_schema::DataType::Float32);
/// assert_eq!(schema.field(1).metadata()["unit"], "m");
/// assert_eq!(schema.metadata()["recfmt.time_column"], "t_us");
/// assert_eq!(schema.metadata()["recfmt.time_base"], "1/1000000");
/// ```
pub fn arrow_schema(header: &Header, stream: &StreamDesc) -> Schema {
    arrow_schema_reserving(header, stream, &[])
}

/// [`arrow_schema()`] of a table that adds columns of its own, named `reserved`, after the
/// signals' (a partitioned dataset's `source`): no signal's column takes one of those names.
pub(crate) fn arrow_schema_reserving(
    header: &Header,
    stream: &StreamDesc,
    reserved: &[&str],
) -> Schema {
    let names = crate::column_names(stream, reserved);
    let fields: Vec<Field> = stream
        .signals
        .iter()
        .zip(&names)
        .map(|(signal, name)| named_field(signal, name))
        .collect();
    Schema::new(fields).with_metadata(stream_metadata(header, stream, &names))
}

/// [`arrow_schema()`] with `extra` entries added to (and overriding) the schema metadata.
pub fn arrow_schema_with(header: &Header, stream: &StreamDesc, extra: &Metadata) -> Schema {
    arrow_schema_with_reserving(header, stream, extra, &[])
}

/// [`arrow_schema_reserving`] with `extra` entries added to (and overriding) the schema
/// metadata.
pub(crate) fn arrow_schema_with_reserving(
    header: &Header,
    stream: &StreamDesc,
    extra: &Metadata,
    reserved: &[&str],
) -> Schema {
    let mut schema = arrow_schema_reserving(header, stream, reserved);
    for (k, v) in extra {
        schema.metadata.insert(k.clone(), v.clone());
    }
    schema
}
