//! MAT v7.3: HDF5 behind MATLAB's 512-byte header, written through `recfmt-h5`.
//!
//! ```text
//! /<stream>              group, MATLAB_class "struct", MATLAB_fields [field names]
//! /<stream>/<field>      (N, 1) chunked, growable; MATLAB_class "double" | "int32" | ...
//!                        ("logical": uint8 with MATLAB_int_decode 1); MATLAB reads 1×N
//! /units/<stream>/<field> uint16 UTF-16 (len, 1), MATLAB_class "char", MATLAB_int_decode 2;
//!                        '' as MATLAB's empty marker (uint64 dims [0 0], MATLAB_empty 1)
//! ```
//!
//! The fields of a stream without rows are replaced, once the rows are written, by MATLAB's
//! empty marker of their class (dims `[1 0]`), which is how MATLAB stores an empty array.
//!
//! ```text
//! ```
//!
//! HDF5 stores MATLAB's dimensions reversed, so the rows run along the first HDF5 axis, the
//! one `recfmt-h5` grows a chunk at a time; memory stays at most one chunk per field.

use std::path::Path;

use hdf5_pure::{AttrValue, Datatype, FileBuilder, GroupBuilder};
use recfmt_core::{FrameBuf, RecordingReader, Result, Value, WriteOptions};
use recfmt_h5::{ChunkedWriter, ColumnBuffer, H5Output, declare_appendable, write_error};

use super::{Class, Counts, Plan, UNITS_VARIABLE, header_text};
use crate::h5::DEFAULT_CHUNK_ROWS;

/// Writes the file; returns the rows written.
pub(crate) fn write(
    reader: &mut dyn RecordingReader,
    plan: &Plan,
    output: &Path,
    write: &WriteOptions,
    counts: &mut Counts,
) -> Result<u64> {
    let header = hdf5_pure::mat::userblock::header_block(&format!(
        "{} HDF5 schema 1.00 .",
        header_text("7.3")
    ));
    let out =
        H5Output::create(output, write.replace, skeleton(plan))?.with_user_block(header.to_vec());
    let mut chunks = ChunkedWriter::for_output(&out, None)?;
    let mut columns = Vec::with_capacity(plan.streams.len());
    for stream in &plan.streams {
        let mut fields = Vec::with_capacity(stream.fields.len());
        for field in &stream.fields {
            let id = chunks.open(out.file(), &format!("{}/{}", stream.name, field.name))?;
            fields.push(ColumnBuffer::new(
                id,
                DEFAULT_CHUNK_ROWS * field.class.size(),
            ));
        }
        columns.push(fields);
    }
    let mut frame = FrameBuf::default();
    let mut value = Vec::with_capacity(8);
    let mut rows = vec![0u64; plan.streams.len()];
    while reader.read_frame(&mut frame)? {
        let Some(Some(at)) = plan.by_stream.get(frame.stream) else {
            continue;
        };
        rows[*at] += 1;
        for (field, column) in plan.streams[*at].fields.iter().zip(&mut columns[*at]) {
            value.clear();
            let v = frame.values.get(field.signal).unwrap_or(&Value::Null);
            field.class.encode(v, &mut value, counts);
            column.push(&value, &mut chunks)?;
        }
    }
    chunks.drain()?;
    for column in columns.iter_mut().flatten() {
        column.finish(&mut chunks)?;
    }
    drop(chunks);
    // MATLAB reads an empty array from its empty marker, not from a dataset without rows.
    for (stream, _) in plan.streams.iter().zip(&rows).filter(|(_, n)| **n == 0) {
        let failed = |e| write_error(output, format!("marking {} empty", stream.name), e);
        let group = out.file().group(&stream.name).map_err(failed)?;
        for field in &stream.fields {
            group.delete(&field.name).map_err(failed)?;
            group
                .create_dataset(&field.name, |d| {
                    empty_marker(d, field.class.matlab_name(), [1, 0])
                })
                .map_err(failed)?;
        }
    }
    out.finish()?;
    Ok(rows.iter().sum())
}

/// MATLAB's empty array of `class`: its dimensions as data, and `MATLAB_empty`.
fn empty_marker(dataset: &mut hdf5_pure::DatasetBuilder, class: &str, dims: [u64; 2]) {
    dataset.with_u64_data(&dims).with_shape(&[2]);
    dataset.set_attr("MATLAB_class", class_attr(class));
    dataset.set_attr("MATLAB_empty", AttrValue::U32(1));
}

/// The groups, the empty datasets and every attribute, declared up front.
fn skeleton(plan: &Plan) -> FileBuilder {
    let mut file = FileBuilder::new();
    let mut units = file.create_group(UNITS_VARIABLE);
    for stream in &plan.streams {
        let mut group = file.create_group(&stream.name);
        let mut stream_units = units.create_group(&stream.name);
        for field in &stream.fields {
            let dataset = group.create_dataset(&field.name);
            declare_appendable(
                dataset,
                datatype(field.class),
                &[1],
                DEFAULT_CHUNK_ROWS,
                None,
            );
            dataset.set_attr("MATLAB_class", class_attr(field.class.matlab_name()));
            if field.class == Class::Logical {
                dataset.set_attr("MATLAB_int_decode", AttrValue::I32(1));
            }
            write_char(stream_units.create_dataset(&field.name), &field.unit);
        }
        let fields: Vec<String> = stream.fields.iter().map(|f| f.name.clone()).collect();
        mark_struct(&mut group, fields.clone());
        mark_struct(&mut stream_units, fields);
        file.add_group(group.finish());
        units.add_group(stream_units.finish());
    }
    mark_struct(
        &mut units,
        plan.streams.iter().map(|s| s.name.clone()).collect(),
    );
    file.add_group(units.finish());
    file
}

fn class_attr(name: &str) -> AttrValue {
    AttrValue::AsciiString(name.to_owned())
}

fn mark_struct(group: &mut GroupBuilder, fields: Vec<String>) {
    group.set_attr("MATLAB_class", class_attr("struct"));
    group.set_attr("MATLAB_fields", AttrValue::VarLenAsciiCharArray(fields));
}

/// A `char` row vector, as MATLAB stores one: UTF-16 code units; `''` as its empty marker.
fn write_char(dataset: &mut hdf5_pure::DatasetBuilder, text: &str) {
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.is_empty() {
        empty_marker(dataset, "char", [0, 0]);
    } else {
        dataset
            .with_u16_data(&units)
            .with_shape(&[units.len() as u64, 1]);
        dataset.set_attr("MATLAB_class", class_attr("char"));
        dataset.set_attr("MATLAB_int_decode", AttrValue::I32(2));
    }
}

fn datatype(class: Class) -> Datatype {
    match class {
        Class::Double => hdf5_pure::make_f64_type(),
        Class::Single => hdf5_pure::make_f32_type(),
        Class::Int8 => hdf5_pure::make_i8_type(),
        Class::Int16 => hdf5_pure::make_i16_type(),
        Class::Int32 => hdf5_pure::make_i32_type(),
        Class::Int64 => hdf5_pure::make_i64_type(),
        Class::UInt8 | Class::Logical => hdf5_pure::make_u8_type(),
        Class::UInt16 => hdf5_pure::make_u16_type(),
        Class::UInt32 => hdf5_pure::make_u32_type(),
        Class::UInt64 => hdf5_pure::make_u64_type(),
    }
}
