//! How each signal is stored: its element type, its dataset's shape and chunks, its link
//! name and its attributes (see [the module docs](super)).

use std::collections::BTreeMap;

use hdf5_pure::{AttrValue, CharacterSet, Datatype, StringPadding};
use recfmt_core::{DType, Header, Metadata, Shape, SignalDesc, StreamDesc};

use super::{Hdf5Options, MAX_CHUNK_ROWS};
use crate::mapping::shape_text;

/// Upper bound on the bytes of one chunk; rows larger than 64 bytes get fewer rows per
/// chunk, so the chunk buffer of one column stays within this (or one row, if larger).
const MAX_CHUNK_BYTES: usize = 4 << 20;

/// The most dimensions an HDF5 dataspace or array datatype may have.
const MAX_RANK: usize = 32;

/// The element type of a stored column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Elem {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// Fixed-width UTF-8 of this many bytes.
    Str(u32),
}

impl Elem {
    pub(super) fn of(dtype: DType, string_width: u32) -> Option<Elem> {
        Some(match dtype {
            DType::Bool => Elem::Bool,
            DType::I8 => Elem::I8,
            DType::I16 => Elem::I16,
            DType::I32 => Elem::I32,
            DType::I64 => Elem::I64,
            DType::U8 => Elem::U8,
            DType::U16 => Elem::U16,
            DType::U32 => Elem::U32,
            DType::U64 => Elem::U64,
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
            DType::Str => Elem::Str(string_width),
            _ => return None,
        })
    }

    pub(super) fn size(self) -> usize {
        match self {
            Elem::Bool | Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
            Elem::Str(width) => width as usize,
        }
    }

    pub(super) fn datatype(self) -> Result<Datatype, hdf5_pure::FormatError> {
        use hdf5_pure::{
            make_f32_type, make_f64_type, make_i8_type, make_i16_type, make_i32_type,
            make_i64_type, make_u8_type, make_u16_type, make_u32_type, make_u64_type,
        };
        Ok(match self {
            // h5py maps an int8 enum with exactly these members to numpy bool.
            Elem::Bool => recfmt_h5::bool_datatype()?,
            Elem::I8 => make_i8_type(),
            Elem::I16 => make_i16_type(),
            Elem::I32 => make_i32_type(),
            Elem::I64 => make_i64_type(),
            Elem::U8 => make_u8_type(),
            Elem::U16 => make_u16_type(),
            Elem::U32 => make_u32_type(),
            Elem::U64 => make_u64_type(),
            Elem::F32 => make_f32_type(),
            Elem::F64 => make_f64_type(),
            Elem::Str(width) => Datatype::String {
                size: width,
                padding: StringPadding::NullPad,
                charset: CharacterSet::Utf8,
            },
        })
    }
}

/// How one signal is stored.
#[derive(Debug, Clone)]
pub(super) enum Layout {
    Stored(StoredLayout),
    Omitted(&'static str),
}

#[derive(Debug, Clone)]
pub(super) struct StoredLayout {
    pub(super) elem: Elem,
    /// Array dimensions of a fixed shape; empty for scalars.
    pub(super) dims: Vec<u32>,
    /// Elements per row.
    pub(super) per_row: usize,
    /// Bytes per row.
    pub(super) row_bytes: usize,
    /// Rows per chunk.
    pub(super) chunk_rows: usize,
}

pub(super) fn layout(signal: &SignalDesc, string_width: u32, chunk_rows: usize) -> Layout {
    let Some(elem) = Elem::of(signal.dtype, string_width) else {
        return Layout::Omitted(if signal.dtype == DType::Bytes {
            "bytes signals have no streaming HDF5 form"
        } else {
            "this dtype has no HDF5 form"
        });
    };
    let dims = match &signal.shape {
        Shape::Scalar => Vec::new(),
        Shape::Variable => {
            return Layout::Omitted(
                "variable-length lists cannot be appended to an HDF5 dataset in bounded memory",
            );
        }
        Shape::Fixed(dims) if dims.is_empty() || dims.contains(&0) => {
            return Layout::Omitted("a fixed shape without elements has no HDF5 form");
        }
        Shape::Fixed(dims) if dims.len() > MAX_RANK => {
            return Layout::Omitted("HDF5 array types have at most 32 dimensions");
        }
        Shape::Fixed(dims) => dims.clone(),
    };
    let per_row = signal.shape.element_count().unwrap_or(usize::MAX);
    let row_bytes = per_row.checked_mul(elem.size());
    match row_bytes {
        Some(row_bytes) if u32::try_from(row_bytes).is_ok() && i32::try_from(per_row).is_ok() => {
            Layout::Stored(StoredLayout {
                elem,
                dims,
                per_row,
                row_bytes,
                chunk_rows: chunk_rows.min(MAX_CHUNK_BYTES / row_bytes).max(1),
            })
        }
        _ => Layout::Omitted("rows of more than 4 GiB have no HDF5 form"),
    }
}

pub(super) struct ColumnPlan {
    pub(super) link: String,
    pub(super) layout: Layout,
}

pub(super) struct StreamPlan {
    pub(super) group: String,
    pub(super) columns: Vec<ColumnPlan>,
}

pub(super) fn plan_stream(
    stream: &StreamDesc,
    group: &str,
    string_width: u32,
    chunk_rows: usize,
) -> StreamPlan {
    let links = crate::names::column_names_from(stream, &[], link_name);
    let columns = stream
        .signals
        .iter()
        .zip(links)
        .map(|(signal, link)| ColumnPlan {
            link,
            layout: layout(signal, string_width, chunk_rows),
        })
        .collect();
    StreamPlan {
        group: group.to_owned(),
        columns,
    }
}

/// Whether a fixed shape can be stored as trailing dataset axes, each held whole by one chunk.
///
/// A dataspace has at most 32 axes, one of which is the rows. And hdf5-pure encodes a chunk
/// dimension above 65 535 in 4 bytes where the C library expects 3, which HDF5 2.0 refuses
/// (see [`MAX_CHUNK_ROWS`]); an axis that long therefore keeps the shape in an HDF5 array
/// element type instead, whose dimensions have no such limit.
fn dataset_axes_hold(dims: &[u32]) -> bool {
    dims.len() < MAX_RANK && dims.iter().all(|&d| d as usize <= MAX_CHUNK_ROWS)
}

/// Declares one empty chunked dataset, unlimited along the rows.
pub(super) fn declare_dataset(
    group: &mut hdf5_pure::GroupBuilder,
    link: &str,
    signal: &SignalDesc,
    layout: &StoredLayout,
    options: &Hdf5Options,
) -> Result<(), hdf5_pure::FormatError> {
    let element = layout.elem.datatype()?;
    // A fixed shape adds one fixed axis per dimension, held whole by every chunk, or else
    // becomes an array element type.
    let (datatype, trailing) = if dataset_axes_hold(&layout.dims) {
        let axes: Vec<u64> = layout.dims.iter().map(|&d| u64::from(d)).collect();
        (element, axes)
    } else {
        let array = Datatype::Array {
            base_type: Box::new(element),
            dimensions: layout.dims.clone(),
        };
        (array, Vec::new())
    };
    let dataset = recfmt_h5::declare_appendable(
        group.create_dataset(link),
        datatype,
        &trailing,
        layout.chunk_rows,
        options.deflate,
    );
    for (key, value) in dataset_attributes(signal) {
        dataset.set_attr(&key, recfmt_h5::text(value));
    }
    Ok(())
}

fn prefixed(key: &str, prefix: &str) -> String {
    if key.starts_with(prefix) {
        key.to_owned()
    } else {
        format!("{prefix}{key}")
    }
}

pub(super) fn root_attributes(header: &Header, extra: &Metadata) -> BTreeMap<String, String> {
    let mut attrs = BTreeMap::new();
    attrs.insert("recfmt.format".to_owned(), header.format.to_owned());
    attrs.insert("recfmt.version".to_owned(), header.version.clone());
    if let Some(reference) = &header.time {
        attrs.insert(
            "recfmt.time_system".to_owned(),
            reference.system.name().to_owned(),
        );
        if let Some(epoch) = reference.to_rfc3339(0.0) {
            attrs.insert("recfmt.epoch".to_owned(), epoch);
        }
    }
    for (k, v) in &header.metadata {
        attrs.insert(prefixed(k, "source."), v.clone());
    }
    for (k, v) in extra {
        attrs.insert(k.clone(), v.clone());
    }
    attrs
}

pub(super) fn group_attributes(
    stream: &StreamDesc,
    plan: &StreamPlan,
) -> BTreeMap<String, AttrValue> {
    let mut attrs = BTreeMap::new();
    attrs.insert("recfmt.stream".to_owned(), stream.name.clone());
    if let Some(time) = plan.columns.get(stream.time) {
        attrs.insert("recfmt.time_column".to_owned(), time.link.clone());
    }
    attrs.insert(
        "recfmt.time_base".to_owned(),
        format!("{}/{}", stream.time_base.numer, stream.time_base.denom),
    );
    if let Some(entity) = stream.entity.and_then(|i| plan.columns.get(i)) {
        attrs.insert("recfmt.entity_column".to_owned(), entity.link.clone());
    }
    for (k, v) in &stream.metadata {
        attrs.insert(prefixed(k, "stream."), v.clone());
    }
    let mut attrs: BTreeMap<String, AttrValue> = attrs
        .into_iter()
        .map(|(k, v)| (k, AttrValue::VarLenString(v)))
        .collect();
    let omitted: Vec<String> = stream
        .signals
        .iter()
        .zip(&plan.columns)
        .filter(|(_, c)| matches!(c.layout, Layout::Omitted(_)))
        .map(|(s, _)| s.name.clone())
        .collect();
    if !omitted.is_empty() {
        attrs.insert(
            "recfmt.omitted_columns".to_owned(),
            AttrValue::VarLenStringArray(omitted),
        );
    }
    attrs
}

fn dataset_attributes(signal: &SignalDesc) -> BTreeMap<String, String> {
    let mut attrs = BTreeMap::new();
    for (k, v) in &signal.metadata {
        attrs.insert(prefixed(k, "recfmt."), v.clone());
    }
    attrs.insert("original_name".to_owned(), signal.name.clone());
    attrs.insert("dtype".to_owned(), signal.dtype.name().to_owned());
    if let Shape::Fixed(dims) = &signal.shape {
        attrs.insert("shape".to_owned(), shape_text(dims));
    }
    if let Some(unit) = &signal.unit {
        attrs.insert(crate::UNIT_KEY.to_owned(), unit.clone());
    }
    attrs
}

/// One HDF5 link name for a stream or signal name (see [the module docs](self#names)).
pub(super) fn link_name(name: &str) -> String {
    let trimmed = name.trim_start_matches('/');
    let link: String = trimmed
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    if link.is_empty() || link == "." || link == ".." {
        "_".into()
    } else {
        link
    }
}

/// Link names for `names`, made unique by appending `_2`, `_3`, ... (the rule of
/// [`crate::column_names`]).
pub(super) fn unique_link_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = crate::names::UniqueNames::new();
    names.map(|name| taken.claim(&link_name(name))).collect()
}
