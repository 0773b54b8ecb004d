//! Header and schema of a recording: streams of typed signals.

use std::collections::BTreeMap;
use std::fmt;

use crate::time::{TimeBase, TimeReference};

/// Free-form key/value metadata, kept sorted so output is deterministic.
pub type Metadata = BTreeMap<String, String>;

/// The element type of a signal, exactly as stored in the source file.
///
/// Exporters map it one to one onto Arrow and HDF5 types, so a `f32` in the file stays `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// Boolean.
    Bool,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE 754 single precision.
    F32,
    /// IEEE 754 double precision.
    F64,
    /// UTF-8 text.
    Str,
    /// Opaque bytes.
    Bytes,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::Str,
        DType::Bytes,
    ];

    /// The lowercase name used in JSON, TOML and metadata (`"f32"`, `"u8"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::Str => "str",
            DType::Bytes => "bytes",
        }
    }

    /// Parses a dtype name. Accepts the names of [`DType::name`] and the common long forms
    /// (`float32`, `uint8`, `int64`, `double`, `string`, ...).
    ///
    /// ```
    /// use recfmt_core::DType;
    /// assert_eq!(DType::parse("float32"), Some(DType::F32));
    /// assert_eq!(DType::parse("u16"), Some(DType::U16));
    /// assert_eq!(DType::parse("complex"), None);
    /// ```
    pub fn parse(name: &str) -> Option<DType> {
        let lower = name.trim().to_ascii_lowercase();
        Some(match lower.as_str() {
            "bool" | "boolean" => DType::Bool,
            "i8" | "int8" => DType::I8,
            "i16" | "int16" => DType::I16,
            "i32" | "int32" => DType::I32,
            "i64" | "int64" => DType::I64,
            "u8" | "uint8" => DType::U8,
            "u16" | "uint16" => DType::U16,
            "u32" | "uint32" => DType::U32,
            "u64" | "uint64" => DType::U64,
            "f32" | "float32" | "float" | "single" => DType::F32,
            "f64" | "float64" | "double" => DType::F64,
            "str" | "string" | "utf8" => DType::Str,
            "bytes" | "binary" => DType::Bytes,
            _ => return None,
        })
    }

    /// Size in bytes of one element, or `None` for variable-size types.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
            DType::Str | DType::Bytes => return None,
        })
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shape of one value of a signal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Shape {
    /// One element per row.
    #[default]
    Scalar,
    /// A fixed-size array per row, row-major (for example `[3]` for a vector, `[3, 3]` for a matrix).
    Fixed(Vec<u32>),
    /// A variable-length list per row.
    Variable,
}

impl Shape {
    /// Number of elements per row for fixed shapes (1 for scalars, `None` for variable shapes).
    pub fn element_count(&self) -> Option<usize> {
        match self {
            Shape::Scalar => Some(1),
            Shape::Fixed(dims) => dims
                .iter()
                .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize)),
            Shape::Variable => None,
        }
    }
}

/// One typed column of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalDesc {
    /// Name as given by the source (`x`, `/position/altitude-ft`, ...).
    pub name: String,
    /// Exact element type.
    pub dtype: DType,
    /// Shape of one value.
    pub shape: Shape,
    /// Physical unit, when the source gives one (`m`, `rad/s`, ...).
    pub unit: Option<String>,
    /// Anything else the source says about the signal.
    pub metadata: Metadata,
}

impl SignalDesc {
    /// A scalar signal without unit or metadata.
    ///
    /// ```
    /// use recfmt_core::{DType, SignalDesc};
    /// let s = SignalDesc::scalar("psi", DType::F32).with_unit("rad");
    /// assert_eq!(s.unit.as_deref(), Some("rad"));
    /// ```
    pub fn scalar(name: impl Into<String>, dtype: DType) -> Self {
        SignalDesc {
            name: name.into(),
            dtype,
            shape: Shape::Scalar,
            unit: None,
            metadata: Metadata::new(),
        }
    }

    /// Sets the unit.
    pub fn with_unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = Some(unit.into());
        self
    }

    /// Sets the shape.
    pub fn with_shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }
}

/// One stream: a sequence of rows with a fixed set of signals and one time column.
///
/// The time column is an ordinary signal (index [`StreamDesc::time`]) kept in its native
/// type, so a `u64` microsecond counter or an `f64` seconds value reaches the output unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamDesc {
    /// Stream name; also the output table or file name.
    pub name: String,
    /// Index of the time signal in `signals`.
    pub time: usize,
    /// Seconds per unit of the time signal.
    pub time_base: TimeBase,
    /// Index of the entity key signal for entity-keyed streams (one row per entity per tick).
    pub entity: Option<usize>,
    /// The columns, time column included.
    pub signals: Vec<SignalDesc>,
    /// Anything else the source says about the stream.
    pub metadata: Metadata,
}

impl StreamDesc {
    /// A stream whose first signal is the time column.
    pub fn new(name: impl Into<String>, time: SignalDesc, time_base: TimeBase) -> Self {
        StreamDesc {
            name: name.into(),
            time: 0,
            time_base,
            entity: None,
            signals: vec![time],
            metadata: Metadata::new(),
        }
    }

    /// Index of the signal called `name`.
    pub fn signal_index(&self, name: &str) -> Option<usize> {
        self.signals.iter().position(|s| s.name == name)
    }
}

/// All streams of a recording. A stream's index in `streams` is its id in [`crate::FrameBuf`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    /// The streams.
    pub streams: Vec<StreamDesc>,
}

impl Schema {
    /// Index of the stream called `name`.
    pub fn stream_index(&self, name: &str) -> Option<usize> {
        self.streams.iter().position(|s| s.name == name)
    }
}

/// What a recording says about itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// Format id (`"usvlog"`, `"carla"`, ...).
    pub format: &'static str,
    /// Format or schema version as the file states it.
    pub version: String,
    /// How recording time maps onto a time system, when known.
    pub time: Option<TimeReference>,
    /// Everything else: generator, scenario, creation time, ...
    pub metadata: Metadata,
}
