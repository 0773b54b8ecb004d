//! MATLAB `.mat` files from any recording (`recfmt convert RUN --to mat -o run.mat`; feature
//! `hdf5`): what Icarus users `load` in MATLAB, GNU Octave, SciPy or `mat73`.
//!
//! One variable per stream, a struct with one field per signal, the row values as a `1×N` row
//! vector of the signal's own class (`f64` → `double`, `f32` → `single`, `i32` → `int32`,
//! `u64` → `uint64`, `bool` → `logical`, ...), the time signal included by its own name. One
//! more variable, `units`, a struct of the same streams holding each field's unit as a `char`
//! row (`''` when the source has none). So in MATLAB:
//!
//! ```matlab
//! run = load('run.mat');
//! plot(run.dynamic.t, run.dynamic.Vehicle_Nav_position_x)
//! ylabel(run.units.dynamic.Vehicle_Nav_position_x)   % 'm'
//! ```
//!
//! Names are made valid MATLAB identifiers (`names` module: `Vehicle.Nav.position.x` →
//! `Vehicle_Nav_position_x`, at most 63 characters, collisions numbered, a stream named
//! `units` becomes `units_2`). What a MAT array cannot hold as a column of numbers is left
//! out with a warning: text and byte signals, arrays and lists. A missing value (a row
//! without that signal) is `NaN` in a floating-point field and `0` in an integer or logical
//! one, which a warning counts.
//!
//! Two versions, chosen with `--opt mat.version=7.3|5`:
//!
//! * **7.3** (the default): HDF5 behind MATLAB's 512-byte header, every group and dataset
//!   with its `MATLAB_class` (and `MATLAB_fields`, `MATLAB_int_decode`), written through
//!   `recfmt-h5` in bounded memory: each field a chunked dataset grown a chunk at a time
//!   (`v73` module). The file uses HDF5 1.10's format (version-3 superblock), which MATLAB
//!   reads from R2021b on (HDF5 1.10.7), and Octave, h5py and `mat73` read.
//! * **5**: the classic Level 5 MAT-file (`v5` module) that `scipy.io.loadmat` and every
//!   MATLAB and Octave read: little-endian `miMATRIX` elements, sizes first, so the values
//!   are spooled to a temporary file on the one read and copied behind their headers after
//!   it, in bounded memory. Such a file is limited to 2 GB; a larger one is refused before it
//!   is written.
//!
//! Both are written under a temporary name and moved into place when complete.

mod names;
mod v5;
mod v73;

use std::path::Path;

use recfmt_core::{
    DType, FormatOption, OptionKind, OutputSource, ReadOptions, RecordingReader, Result, Schema,
    Shape, SpecialOutput, Value, WriteOptions, Written,
};

pub use names::{MAX_NAME_LEN, identifier};

/// The id of the output and the qualifier of its options (`--opt mat.version=5`).
pub const MAT_OUTPUT_ID: &str = "mat";

/// The variable holding the units, reserved at the top of the file.
pub const UNITS_VARIABLE: &str = "units";

/// The options of the MAT output.
static OPTIONS: [FormatOption; 1] = [FormatOption {
    key: "version",
    kind: OptionKind::Choice(&["7.3", "5"]),
    default: Some("7.3"),
    help: "MAT-file version: 7.3 (HDF5, any size) or 5 (classic, up to 2 GB, what SciPy's loadmat reads)",
}];

/// The MAT output, for a format descriptor's `outputs`.
pub static OUTPUTS: [SpecialOutput; 1] = [SpecialOutput {
    id: MAT_OUTPUT_ID,
    help: "a MATLAB MAT-file (-o FILE.mat): a struct per stream, a field per signal, units in `units`; --opt mat.version=5 for the classic format",
    file_extension: Some("mat"),
    source: OutputSource::Rows(write_mat),
    options: &OPTIONS,
}];

/// Which MAT-file version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatVersion {
    /// HDF5-based, any size.
    V73,
    /// Level 5, at most 2 GB.
    V5,
}

/// Writes `reader`'s rows as a MAT-file at `output`; `write.format_options` may hold
/// `version` (`7.3` or `5`).
pub fn write_mat(
    reader: &mut dyn RecordingReader,
    output: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> Result<Written> {
    let version = match write.format_options.get("version") {
        Some("5") => MatVersion::V5,
        _ => MatVersion::V73,
    };
    let plan = Plan::new(reader.schema());
    let mut counts = Counts::default();
    let rows = match version {
        MatVersion::V73 => v73::write(reader, &plan, output, write, &mut counts)?,
        MatVersion::V5 => v5::write(reader, &plan, output, write, &mut counts)?,
    };
    let mut notes = vec![format!(
        "wrote {} (MAT {}, {} streams, {rows} rows)",
        output.display(),
        match version {
            MatVersion::V73 => "7.3",
            MatVersion::V5 => "5",
        },
        plan.streams.len()
    )];
    notes.extend(plan.skipped.iter().cloned());
    if counts.zero_filled > 0 {
        notes.push(format!(
            "warning: {} missing values of integer or logical signals written as 0",
            counts.zero_filled
        ));
    }
    Ok(Written {
        notes,
        integrity: None,
    })
}

/// A variable of the file: a stream kept, and its fields (what `load` shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatVariable {
    /// The stream's name in the recording.
    pub stream: String,
    /// Its variable's name in the file.
    pub variable: String,
    /// Its fields, in order.
    pub fields: Vec<MatField>,
}

/// A field of a stream's struct: a signal kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatField {
    /// The signal's name in the recording.
    pub signal: String,
    /// The signal's index in its stream (names may repeat).
    pub index: usize,
    /// Its field's name in the file.
    pub field: String,
    /// Its MATLAB class (`double`, `single`, `int32`, `logical`, ...).
    pub class: &'static str,
    /// Its unit, `""` when the source gives none.
    pub unit: String,
}

/// The variables and fields a recording of `schema` gets in a MAT-file, with the names made
/// MATLAB identifiers; streams and signals left out are absent.
///
/// ```
/// use recfmt_core::{DType, Schema, SignalDesc, StreamDesc, TimeBase};
/// let mut stream = StreamDesc::new("dynamic", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
/// stream.signals.push(SignalDesc::scalar("Vehicle.Nav.position.x", DType::F64).with_unit("m"));
/// let vars = recfmt_icarec::mat::variables(&Schema { streams: vec![stream] });
/// assert_eq!(vars[0].variable, "dynamic");
/// assert_eq!(vars[0].fields[1].field, "Vehicle_Nav_position_x");
/// assert_eq!(vars[0].fields[1].unit, "m");
/// ```
pub fn variables(schema: &Schema) -> Vec<MatVariable> {
    let plan = Plan::new(schema);
    schema
        .streams
        .iter()
        .zip(&plan.by_stream)
        .filter_map(|(desc, at)| {
            let stream = &plan.streams[(*at)?];
            Some(MatVariable {
                stream: desc.name.clone(),
                variable: stream.name.clone(),
                fields: stream
                    .fields
                    .iter()
                    .map(|f| MatField {
                        signal: desc.signals[f.signal].name.clone(),
                        index: f.signal,
                        field: f.name.clone(),
                        class: f.class.matlab_name(),
                        unit: f.unit.clone(),
                    })
                    .collect(),
            })
        })
        .collect()
}

/// What the writing counted.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Missing values written as 0 (integer and logical fields have no NaN).
    pub zero_filled: u64,
}

/// The layout of the file, the same for both versions: variables, their fields, classes.
#[derive(Debug)]
pub(crate) struct Plan {
    pub streams: Vec<StreamPlan>,
    /// The stream of the schema -> its index in `streams`.
    pub by_stream: Vec<Option<usize>>,
    /// Warnings about what was left out.
    pub skipped: Vec<String>,
}

/// One variable: a stream.
#[derive(Debug)]
pub(crate) struct StreamPlan {
    pub name: String,
    pub fields: Vec<FieldPlan>,
}

/// One field of a stream's struct: a signal.
#[derive(Debug)]
pub(crate) struct FieldPlan {
    pub name: String,
    /// Index of the signal in the stream's row.
    pub signal: usize,
    pub class: Class,
    pub unit: String,
}

impl Plan {
    pub fn new(schema: &Schema) -> Plan {
        let mut variables = names::Names::with_reserved(&[UNITS_VARIABLE]);
        let mut streams = Vec::new();
        let mut by_stream = Vec::new();
        let mut skipped = Vec::new();
        for stream in &schema.streams {
            let mut fields_names = names::Names::default();
            let mut fields = Vec::new();
            let mut left_out = Vec::new();
            for (i, signal) in stream.signals.iter().enumerate() {
                match (Class::of(signal.dtype), &signal.shape) {
                    (Some(class), Shape::Scalar) => fields.push(FieldPlan {
                        name: fields_names.add(&signal.name),
                        signal: i,
                        class,
                        unit: signal.unit.clone().unwrap_or_default(),
                    }),
                    _ => left_out.push(signal.name.as_str()),
                }
            }
            if !left_out.is_empty() && !fields.is_empty() {
                skipped.push(format!(
                    "warning: stream {}: left out {} (text, bytes and arrays have no MAT column): {}",
                    stream.name,
                    left_out.len(),
                    left_out.join(", ")
                ));
            }
            if fields.is_empty() {
                skipped.push(format!(
                    "warning: stream {} left out: none of its signals is a number ({})",
                    stream.name,
                    left_out.join(", ")
                ));
                by_stream.push(None);
                continue;
            }
            by_stream.push(Some(streams.len()));
            streams.push(StreamPlan {
                name: variables.add(&stream.name),
                fields,
            });
        }
        Plan {
            streams,
            by_stream,
            skipped,
        }
    }
}

/// A MATLAB numeric class, and how one value of it is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Double,
    Single,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    /// `uint8` storage with the logical flag.
    Logical,
}

impl Class {
    /// The class holding a signal of `dtype` exactly, if any.
    fn of(dtype: DType) -> Option<Class> {
        Some(match dtype {
            DType::F64 => Class::Double,
            DType::F32 => Class::Single,
            DType::I8 => Class::Int8,
            DType::I16 => Class::Int16,
            DType::I32 => Class::Int32,
            DType::I64 => Class::Int64,
            DType::U8 => Class::UInt8,
            DType::U16 => Class::UInt16,
            DType::U32 => Class::UInt32,
            DType::U64 => Class::UInt64,
            DType::Bool => Class::Logical,
            _ => return None,
        })
    }

    /// The `MATLAB_class` name.
    pub fn matlab_name(self) -> &'static str {
        match self {
            Class::Double => "double",
            Class::Single => "single",
            Class::Int8 => "int8",
            Class::Int16 => "int16",
            Class::Int32 => "int32",
            Class::Int64 => "int64",
            Class::UInt8 => "uint8",
            Class::UInt16 => "uint16",
            Class::UInt32 => "uint32",
            Class::UInt64 => "uint64",
            Class::Logical => "logical",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Class::Int8 | Class::UInt8 | Class::Logical => 1,
            Class::Int16 | Class::UInt16 => 2,
            Class::Single | Class::Int32 | Class::UInt32 => 4,
            Class::Double | Class::Int64 | Class::UInt64 => 8,
        }
    }

    /// Appends `value` little-endian; a missing value is NaN, or 0 (counted in `counts`)
    /// where the class has no NaN. The reader's value has the signal's dtype, which this
    /// class holds exactly.
    pub fn encode(self, value: &Value, out: &mut Vec<u8>, counts: &mut Counts) {
        let int = match value {
            Value::Int(v) => Some(i128::from(*v)),
            Value::UInt(v) => Some(i128::from(*v)),
            Value::Bool(b) => Some(i128::from(*b)),
            Value::Float(f) => Some(*f as i128),
            _ => None,
        };
        let float = match value {
            Value::Float(f) => *f,
            Value::Int(v) => *v as f64,
            Value::UInt(v) => *v as f64,
            Value::Bool(b) => f64::from(u8::from(*b)),
            _ => f64::NAN,
        };
        if int.is_none() && !matches!(self, Class::Double | Class::Single) {
            counts.zero_filled += 1;
        }
        let int = int.unwrap_or(0);
        match self {
            Class::Double => out.extend_from_slice(&float.to_le_bytes()),
            Class::Single => out.extend_from_slice(&(float as f32).to_le_bytes()),
            Class::Int8 => out.extend_from_slice(&(int as i8).to_le_bytes()),
            Class::Int16 => out.extend_from_slice(&(int as i16).to_le_bytes()),
            Class::Int32 => out.extend_from_slice(&(int as i32).to_le_bytes()),
            Class::Int64 => out.extend_from_slice(&(int as i64).to_le_bytes()),
            Class::UInt8 | Class::Logical => out.push(int as u8),
            Class::UInt16 => out.extend_from_slice(&(int as u16).to_le_bytes()),
            Class::UInt32 => out.extend_from_slice(&(int as u32).to_le_bytes()),
            Class::UInt64 => out.extend_from_slice(&(int as u64).to_le_bytes()),
        }
    }
}

/// The header text both versions start with (`MATLAB 5.0 MAT-file, ...`), space-padded to
/// 116 bytes by the caller.
pub(crate) fn header_text(version: &str) -> String {
    format!(
        "MATLAB {version} MAT-file, Platform: recfmt, Created on: {}",
        recfmt_core::now_rfc3339()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use recfmt_core::{SignalDesc, StreamDesc, TimeBase};

    #[test]
    fn the_plan_keeps_numbers_and_names_what_it_leaves_out() {
        let mut stream = StreamDesc::new(
            "units",
            SignalDesc::scalar("t", DType::F64).with_unit("s"),
            TimeBase::SECONDS,
        );
        stream.signals.push(SignalDesc::scalar("a.b", DType::I32));
        stream.signals.push(SignalDesc::scalar("a-b", DType::Bool));
        stream.signals.push(SignalDesc::scalar("name", DType::Str));
        let text_only = StreamDesc {
            signals: vec![SignalDesc::scalar("msg", DType::Str)],
            ..StreamDesc::new(
                "log",
                SignalDesc::scalar("msg", DType::Str),
                TimeBase::SECONDS,
            )
        };
        let plan = Plan::new(&Schema {
            streams: vec![stream, text_only],
        });
        assert_eq!(plan.streams.len(), 1);
        assert_eq!(plan.by_stream, [Some(0), None]);
        let s = &plan.streams[0];
        assert_eq!(s.name, "units_2");
        let names: Vec<_> = s.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["t", "a_b", "a_b_2"]);
        assert_eq!(s.fields[0].unit, "s");
        assert_eq!(s.fields[2].class, Class::Logical);
        assert_eq!(plan.skipped.len(), 2, "{:?}", plan.skipped);
    }

    #[test]
    fn missing_values_are_nan_or_counted_zeros() {
        let mut counts = Counts::default();
        let mut out = Vec::new();
        Class::Double.encode(&Value::Null, &mut out, &mut counts);
        assert!(f64::from_le_bytes(out[..8].try_into().unwrap()).is_nan());
        assert_eq!(counts.zero_filled, 0);
        Class::Int16.encode(&Value::Null, &mut out, &mut counts);
        Class::UInt64.encode(&Value::UInt(u64::MAX), &mut out, &mut counts);
        Class::Int8.encode(&Value::Int(-3), &mut out, &mut counts);
        assert_eq!(counts.zero_filled, 1);
        assert_eq!(&out[8..10], &[0, 0]);
        assert_eq!(&out[10..18], &u64::MAX.to_le_bytes());
        assert_eq!(out[18] as i8, -3);
    }
}
