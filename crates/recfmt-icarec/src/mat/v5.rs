//! The classic Level 5 MAT-file (MathWorks, "MAT-File Format", version 5 and later),
//! little-endian.
//!
//! ```text
//! header      116 bytes of text, 8 bytes subsystem offset (0), version 0x0100, "IM"
//! variables   one miMATRIX element each: array flags, dimensions, name, then
//!             struct: field name length (small element), field names, one unnamed
//!                     miMATRIX per field;
//!             number: its data as one element of the class's own type (miDOUBLE, miINT32...)
//! ```
//!
//! Every element's size comes before it, and the row count of a stream is known only at the
//! end of the recording. So the one read spools each field's values to a temporary file
//! beside the output, in blocks (about 32 MiB of buffers over all fields), and the file is
//! then written front to back from the spool: bounded memory, one extra write of the data.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use recfmt_core::{
    AtomicFile, Error, FrameBuf, RecordingReader, Result, TempPath, Value, WriteOptions,
};

use super::{Class, Counts, MAT_OUTPUT_ID, Plan, UNITS_VARIABLE, header_text};

/// The largest file written: MATLAB's limit for version 5 (2 GB).
pub const MAX_V5_BYTES: u64 = i32::MAX as u64;

/// Budget for the spool's block buffers over all fields.
const SPOOL_BUDGET: usize = 32 << 20;

// Data types (miXXX) and array classes (mxXXX_CLASS) of the format.
const MI_INT8: u32 = 1;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_MATRIX: u32 = 14;
const MX_STRUCT: u8 = 2;
const MX_CHAR: u8 = 4;
/// The logical flag of the array flags' flag byte.
const LOGICAL_FLAG: u8 = 0x02;

/// Writes the file; returns the rows written.
pub(crate) fn write(
    reader: &mut dyn RecordingReader,
    plan: &Plan,
    output: &Path,
    write: &WriteOptions,
    counts: &mut Counts,
) -> Result<u64> {
    let spool_path =
        TempPath::reserve(output, write.replace).map_err(|e| Error::Io(e).in_file(output))?;
    let io = |e: std::io::Error| Error::Io(e).in_file(output);
    let spool_file = File::options()
        .read(true)
        .write(true)
        .open(spool_path.path())
        .map_err(io)?;
    let fields: usize = plan.streams.iter().map(|s| s.fields.len()).sum();
    let mut spool = Spool::new(spool_file, fields);
    let mut rows = vec![0u64; plan.streams.len()];
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        let Some(Some(at)) = plan.by_stream.get(frame.stream) else {
            continue;
        };
        rows[*at] += 1;
        let first = plan.streams[..*at]
            .iter()
            .map(|s| s.fields.len())
            .sum::<usize>();
        for (i, field) in plan.streams[*at].fields.iter().enumerate() {
            let v = frame.values.get(field.signal).unwrap_or(&Value::Null);
            spool.push(first + i, field.class, v, counts).map_err(io)?;
        }
        if spool.bytes > MAX_V5_BYTES {
            return Err(too_large(spool.bytes));
        }
    }
    let size = file_size(plan, &rows);
    if size > MAX_V5_BYTES {
        return Err(too_large(size));
    }
    let out = AtomicFile::create(output, write.replace).map_err(io)?;
    let mut out = Out {
        w: BufWriter::with_capacity(1 << 20, out),
    };
    write_file(&mut out, plan, &rows, &mut spool).map_err(io)?;
    let file = out.w.into_inner().map_err(|e| io(e.into_error()))?;
    file.commit().map_err(io)?;
    drop(spool_path);
    Ok(rows.iter().sum())
}

fn too_large(bytes: u64) -> Error {
    Error::unsupported(
        MAT_OUTPUT_ID,
        format!(
            "a MAT version 5 file holds at most 2 GB ({MAX_V5_BYTES} bytes) and this one would hold {bytes}; write MAT 7.3 (the default, --opt mat.version=7.3)"
        ),
    )
}

/// Each field's values in the temporary file, a block at a time, plus the last partial block
/// in memory.
struct Spool {
    file: File,
    end: u64,
    block: usize,
    pending: Vec<Vec<u8>>,
    /// Per field: (offset, length) of its blocks in the file, in order.
    blocks: Vec<Vec<(u64, usize)>>,
    /// Every value's bytes so far.
    bytes: u64,
}

impl Spool {
    fn new(file: File, fields: usize) -> Spool {
        let block = (SPOOL_BUDGET / fields.max(1)).clamp(4 << 10, 1 << 20);
        Spool {
            file,
            end: 0,
            block,
            pending: vec![Vec::new(); fields],
            blocks: vec![Vec::new(); fields],
            bytes: 0,
        }
    }

    fn push(
        &mut self,
        field: usize,
        class: Class,
        value: &Value,
        counts: &mut Counts,
    ) -> std::io::Result<()> {
        let buf = &mut self.pending[field];
        class.encode(value, buf, counts);
        self.bytes += class.size() as u64;
        if buf.len() >= self.block {
            self.file.seek(SeekFrom::Start(self.end))?;
            self.file.write_all(buf)?;
            self.blocks[field].push((self.end, buf.len()));
            self.end += buf.len() as u64;
            buf.clear();
        }
        Ok(())
    }

    /// Copies every value of `field` to `out`.
    fn copy(&mut self, field: usize, out: &mut impl Write) -> std::io::Result<()> {
        let mut buf = vec![0u8; self.block];
        for &(offset, len) in &self.blocks[field] {
            self.file.seek(SeekFrom::Start(offset))?;
            let chunk = &mut buf[..len];
            self.file.read_exact(chunk)?;
            out.write_all(chunk)?;
        }
        out.write_all(&self.pending[field])
    }
}

fn pad8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

/// The length of each field name in a struct's field-name element: 32, or 64 for names of 32
/// characters or more (MATLAB's names have at most 63).
fn field_name_len(names: &[&str]) -> u64 {
    if names.iter().all(|n| n.len() < 32) {
        32
    } else {
        64
    }
}

/// Bytes of a miMATRIX element's content (after its 8-byte tag).
fn numeric_size(rows: u64, class: Class) -> u64 {
    16 + 16 + 8 + 8 + pad8(rows * class.size() as u64)
}

fn char_size(text: &str) -> u64 {
    let units = text.encode_utf16().count() as u64;
    16 + 16 + 8 + 8 + pad8(2 * units)
}

fn struct_size(name: &str, fields: &[&str], children: u64) -> u64 {
    let name_bytes = if name.is_empty() {
        8
    } else {
        8 + pad8(name.len() as u64)
    };
    16 + 16 + name_bytes + 8 + 8 + pad8(fields.len() as u64 * field_name_len(fields)) + children
}

fn stream_sizes(plan: &Plan, rows: &[u64]) -> Vec<u64> {
    plan.streams
        .iter()
        .zip(rows)
        .map(|(s, &n)| {
            let names: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
            let children: u64 = s.fields.iter().map(|f| 8 + numeric_size(n, f.class)).sum();
            struct_size(&s.name, &names, children)
        })
        .collect()
}

fn units_size(plan: &Plan) -> u64 {
    let streams: Vec<&str> = plan.streams.iter().map(|s| s.name.as_str()).collect();
    let children: u64 = plan
        .streams
        .iter()
        .map(|s| {
            let names: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
            let units: u64 = s.fields.iter().map(|f| 8 + char_size(&f.unit)).sum();
            8 + struct_size("", &names, units)
        })
        .sum();
    struct_size(UNITS_VARIABLE, &streams, children)
}

/// The size of the whole file.
fn file_size(plan: &Plan, rows: &[u64]) -> u64 {
    let streams: u64 = stream_sizes(plan, rows).iter().map(|s| 8 + s).sum();
    128 + streams + 8 + units_size(plan)
}

/// Little-endian element writing.
struct Out<W: Write> {
    w: W,
}

impl<W: Write> Out<W> {
    fn u32(&mut self, v: u32) -> std::io::Result<()> {
        self.w.write_all(&v.to_le_bytes())
    }

    fn tag(&mut self, ty: u32, bytes: u64) -> std::io::Result<()> {
        let bytes = u32::try_from(bytes).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "element over 4 GB")
        })?;
        self.u32(ty)?;
        self.u32(bytes)
    }

    fn pad(&mut self, written: u64) -> std::io::Result<()> {
        let zeros = [0u8; 8];
        self.w
            .write_all(&zeros[..(pad8(written) - written) as usize])
    }

    /// A miMATRIX tag and its array flags, dimensions `1×cols` and name.
    fn matrix_start(
        &mut self,
        content: u64,
        class: u8,
        flags: u8,
        cols: u64,
        name: &str,
    ) -> std::io::Result<()> {
        let cols = i32::try_from(cols)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "over 2^31 rows"))?;
        self.tag(MI_MATRIX, content)?;
        self.tag(MI_UINT32, 8)?;
        self.u32(u32::from(class) | (u32::from(flags) << 8))?;
        self.u32(0)?;
        self.tag(MI_INT32, 8)?;
        self.w.write_all(&1i32.to_le_bytes())?;
        self.w.write_all(&cols.to_le_bytes())?;
        self.tag(MI_INT8, name.len() as u64)?;
        self.w.write_all(name.as_bytes())?;
        self.pad(name.len() as u64)
    }

    /// A struct's start: its matrix header (1×1) and field names.
    fn struct_start(&mut self, content: u64, name: &str, fields: &[&str]) -> std::io::Result<()> {
        self.matrix_start(content, MX_STRUCT, 0, 1, name)?;
        let len = field_name_len(fields);
        // The field name length as a small data element: size in the tag's high half.
        self.u32(MI_INT32 | (4 << 16))?;
        self.w.write_all(&(len as i32).to_le_bytes())?;
        self.tag(MI_INT8, fields.len() as u64 * len)?;
        for field in fields {
            let mut padded = vec![0u8; len as usize];
            padded[..field.len()].copy_from_slice(field.as_bytes());
            self.w.write_all(&padded)?;
        }
        self.pad(fields.len() as u64 * len)
    }

    fn char_row(&mut self, text: &str) -> std::io::Result<()> {
        let units: Vec<u16> = text.encode_utf16().collect();
        self.matrix_start(char_size(text), MX_CHAR, 0, units.len() as u64, "")?;
        let bytes = 2 * units.len() as u64;
        self.tag(MI_UINT16, bytes)?;
        for u in units {
            self.w.write_all(&u.to_le_bytes())?;
        }
        self.pad(bytes)
    }
}

fn write_file<W: Write>(
    out: &mut Out<W>,
    plan: &Plan,
    rows: &[u64],
    spool: &mut Spool,
) -> std::io::Result<()> {
    let mut header = header_text("5.0").into_bytes();
    header.resize(116, b' ');
    out.w.write_all(&header)?;
    out.w.write_all(&[0u8; 8])?;
    out.w.write_all(&0x0100u16.to_le_bytes())?;
    out.w.write_all(b"IM")?;

    let mut field = 0;
    for ((stream, &n), size) in plan.streams.iter().zip(rows).zip(stream_sizes(plan, rows)) {
        let names: Vec<&str> = stream.fields.iter().map(|f| f.name.as_str()).collect();
        out.struct_start(size, &stream.name, &names)?;
        for f in &stream.fields {
            let (class, flags) = mx_class(f.class);
            out.matrix_start(numeric_size(n, f.class), class, flags, n, "")?;
            let bytes = n * f.class.size() as u64;
            out.tag(mi_type(f.class), bytes)?;
            spool.copy(field, &mut out.w)?;
            out.pad(bytes)?;
            field += 1;
        }
    }

    let streams: Vec<&str> = plan.streams.iter().map(|s| s.name.as_str()).collect();
    out.struct_start(units_size(plan), UNITS_VARIABLE, &streams)?;
    for stream in &plan.streams {
        let names: Vec<&str> = stream.fields.iter().map(|f| f.name.as_str()).collect();
        let units: u64 = stream.fields.iter().map(|f| 8 + char_size(&f.unit)).sum();
        out.struct_start(struct_size("", &names, units), "", &names)?;
        for f in &stream.fields {
            out.char_row(&f.unit)?;
        }
    }
    out.w.flush()
}

/// The array class and flag byte of a field.
fn mx_class(class: Class) -> (u8, u8) {
    match class {
        Class::Double => (6, 0),
        Class::Single => (7, 0),
        Class::Int8 => (8, 0),
        Class::UInt8 => (9, 0),
        Class::Logical => (9, LOGICAL_FLAG),
        Class::Int16 => (10, 0),
        Class::UInt16 => (11, 0),
        Class::Int32 => (12, 0),
        Class::UInt32 => (13, 0),
        Class::Int64 => (14, 0),
        Class::UInt64 => (15, 0),
    }
}

/// The data type of a field's values.
fn mi_type(class: Class) -> u32 {
    match class {
        Class::Int8 => 1,
        Class::UInt8 | Class::Logical => 2,
        Class::Int16 => 3,
        Class::UInt16 => 4,
        Class::Int32 => 5,
        Class::UInt32 => 6,
        Class::Single => 7,
        Class::Double => 9,
        Class::Int64 => 12,
        Class::UInt64 => 13,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_elements_written() {
        let mut out = Out { w: Vec::new() };
        out.char_row("m/s").unwrap();
        assert_eq!(out.w.len() as u64, 8 + char_size("m/s"));
        let mut out = Out { w: Vec::new() };
        out.struct_start(0, "dynamic", &["t", "x"]).unwrap();
        assert_eq!(
            out.w.len() as u64,
            8 + struct_size("dynamic", &["t", "x"], 0)
        );
        let long = "a".repeat(40);
        assert_eq!(field_name_len(&["t", &long]), 64);
    }

    #[test]
    fn a_file_over_two_gigabytes_is_refused_with_what_to_do() {
        let e = too_large(3 << 30);
        assert_eq!(e.kind(), recfmt_core::ErrorKind::Unsupported);
        assert!(e.to_string().contains("mat.version=7.3"), "{e}");
    }
}
