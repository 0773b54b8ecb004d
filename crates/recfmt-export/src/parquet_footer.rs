//! Float statistics that every engine reads: the footer's column orders as pyarrow writes them.
//!
//! parquet-rs (since 60) orders float statistics by IEEE 754 total order and says so in the
//! footer's `column_orders` (`IEEE_754_TOTAL_ORDER`, PARQUET-2249). Readers that predate it
//! (Arrow C++ and so pyarrow up to 26, DuckDB, Spark) treat an order they do not know as "no
//! usable statistics" and never skip a row group on a float filter. The min/max parquet-rs
//! computes leave NaN out and are exact bounds of the other values, so they are also valid
//! bounds under `TYPE_DEFINED_ORDER`, the order pyarrow writes (its min/max leave NaN out the
//! same way). parquet-rs has no setting for it, so [`FooterTail`] keeps the last bytes of the
//! file as they are written and [`retype_float_orders`] rewrites the footer's column orders in
//! place: each float column's `IEEE_754_TOTAL_ORDER` becomes `TYPE_ORDER`, the same number of
//! bytes, so nothing else in the file moves. What it expects is checked byte for byte first.

use std::io::{self, Seek, SeekFrom, Write};

use parquet::basic::ColumnOrder;
use parquet::schema::types::SchemaDescriptor;

/// Thrift compact encoding of one `ColumnOrder` union: the field header of its member (an
/// empty struct), the member's stop and the union's stop.
fn encoded_order(order: ColumnOrder) -> Option<[u8; 3]> {
    let member: u8 = match order {
        ColumnOrder::TYPE_DEFINED_ORDER(_) => 1,
        ColumnOrder::IEEE_754_TOTAL_ORDER => 2,
        ColumnOrder::INT96_TIMESTAMP_ORDER => 3,
        _ => return None,
    };
    // Compact protocol: field id delta in the high nibble, type 12 (struct) in the low one.
    Some([(member << 4) | 0x0C, 0, 0])
}

/// `TYPE_ORDER`, what float columns get instead.
const TYPE_ORDER: [u8; 3] = [0x1C, 0, 0];

/// A compact-protocol list header of `n` structs.
fn list_header(n: usize) -> Vec<u8> {
    if n < 15 {
        return vec![((n as u8) << 4) | 0x0C];
    }
    let mut out = vec![0xFC];
    let mut v = n as u64;
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A writer that passes everything on and keeps the last `keep` bytes written, so the footer
/// can be checked and patched after parquet-rs has written it.
#[derive(Debug)]
pub(crate) struct FooterTail<W> {
    inner: W,
    tail: Vec<u8>,
    keep: usize,
    written: u64,
}

impl<W: Write + Seek> FooterTail<W> {
    /// Keeps enough bytes for the column orders of `schema` and the footer's end.
    pub(crate) fn new(inner: W, schema: &SchemaDescriptor) -> Self {
        // 3 bytes per leaf, the list and field headers (at most 12), the struct's stop, the
        // footer length and the magic.
        let keep = schema.num_columns() * 3 + 32;
        FooterTail {
            inner,
            tail: Vec::with_capacity(keep * 2),
            keep,
            written: 0,
        }
    }

    /// The file, once [`retype_float_orders`] is done.
    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for FooterTail<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let buf = &buf[..n];
        if buf.len() >= self.keep {
            self.tail.clear();
            self.tail.extend_from_slice(&buf[buf.len() - self.keep..]);
        } else {
            self.tail.extend_from_slice(buf);
            if self.tail.len() > self.keep * 2 {
                let excess = self.tail.len() - self.keep;
                self.tail.drain(..excess);
            }
        }
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Rewrites the column orders at the end of the complete Parquet file in `file`: float
/// columns' `IEEE_754_TOTAL_ORDER` becomes `TYPE_ORDER` (see the module). Fails, changing
/// nothing, when the footer does not end as parquet-rs writes it for `schema`.
pub(crate) fn retype_float_orders<W: Write + Seek>(
    file: &mut FooterTail<W>,
    schema: &SchemaDescriptor,
) -> io::Result<()> {
    let unexpected = |what: &str| {
        io::Error::other(format!(
            "the Parquet footer does not end as expected ({what}); its float statistics would be \
             unreadable by pyarrow"
        ))
    };
    let orders: Vec<ColumnOrder> = schema
        .columns()
        .iter()
        .map(|c| {
            ColumnOrder::column_order_for_type(
                c.logical_type_ref(),
                c.converted_type(),
                c.physical_type(),
            )
        })
        .collect();
    // Footer end: ... column_orders, the struct's stop, the metadata length, `PAR1`.
    let mut expected = list_header(orders.len());
    let header_len = expected.len();
    let mut patched = expected.clone();
    for order in &orders {
        let bytes = encoded_order(*order).ok_or_else(|| unexpected("an unknown column order"))?;
        expected.extend_from_slice(&bytes);
        patched.extend_from_slice(if *order == ColumnOrder::IEEE_754_TOTAL_ORDER {
            &TYPE_ORDER
        } else {
            &bytes
        });
    }
    if expected == patched {
        return Ok(());
    }
    let tail = &file.tail;
    let end = tail.len();
    if end < 8 || &tail[end - 4..] != b"PAR1" {
        return Err(unexpected("no closing magic"));
    }
    // The stop of FileMetaData, then the list; before it, field 7's header: 0x19 (id delta 1
    // from `created_by`, type list) or the long form 0x09 with the zigzag id 14.
    let list_end = end - 9;
    if tail[list_end] != 0 {
        return Err(unexpected("no struct stop after the column orders"));
    }
    let list_start = list_end
        .checked_sub(expected.len())
        .ok_or_else(|| unexpected("too short"))?;
    if tail[list_start..list_end] != expected[..] {
        return Err(unexpected("column orders differ from the schema's"));
    }
    let field_header_ok = match list_start {
        0 => false,
        1 => tail[0] == 0x19,
        _ => tail[list_start - 1] == 0x19 || tail[list_start - 2..list_start] == [0x09, 0x0E],
    };
    if !field_header_ok {
        return Err(unexpected("no column_orders field header"));
    }
    let from_end = (end - list_start - header_len) as u64;
    let position = file
        .written
        .checked_sub(from_end)
        .ok_or_else(|| unexpected("too short"))?;
    file.inner.seek(SeekFrom::Start(position))?;
    file.inner.write_all(&patched[header_len..])?;
    file.inner.seek(SeekFrom::End(0))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn float_schema() -> SchemaDescriptor {
        let schema = arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("t", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("x", arrow_schema::DataType::Float32, false),
        ]);
        parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .unwrap()
    }

    /// A file that does not end as parquet-rs writes it is refused and left as it was.
    #[test]
    fn an_unexpected_footer_is_refused_untouched() {
        let schema = float_schema();
        let bytes: Vec<u8> = (0..200u8).chain(*b"PAR1").collect();
        let mut file = FooterTail::new(io::Cursor::new(Vec::new()), &schema);
        file.write_all(&bytes).unwrap();
        assert!(retype_float_orders(&mut file, &schema).is_err());
        assert_eq!(file.into_inner().into_inner(), bytes);
    }

    /// The float column's order is rewritten and nothing else changes.
    #[test]
    fn a_float_order_becomes_type_defined() {
        use arrow_array::{ArrayRef, Float32Array, Int64Array, RecordBatch};
        let schema = float_schema();
        let batch = RecordBatch::try_from_iter([
            ("t", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            (
                "x",
                Arc::new(Float32Array::from(vec![0.5, -1.5])) as ArrayRef,
            ),
        ])
        .unwrap();
        let file = FooterTail::new(io::Cursor::new(Vec::new()), &schema);
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        let mut file = writer.into_inner().unwrap();
        let before = file.inner.get_ref().clone();
        retype_float_orders(&mut file, &schema).unwrap();
        let after = file.into_inner().into_inner();
        let changed: Vec<usize> = (0..after.len())
            .filter(|&i| before[i] != after[i])
            .collect();
        assert_eq!(changed.len(), 1);
        assert_eq!((before[changed[0]], after[changed[0]]), (0x2C, 0x1C));
        let mut on_disk = tempfile::tempfile().unwrap();
        on_disk.write_all(&after).unwrap();
        let reader = parquet::file::serialized_reader::SerializedFileReader::new(on_disk).unwrap();
        let orders = parquet::file::reader::FileReader::metadata(&reader)
            .file_metadata()
            .column_orders()
            .unwrap()
            .clone();
        assert!(
            orders
                .iter()
                .all(|o| matches!(o, ColumnOrder::TYPE_DEFINED_ORDER(_)))
        );
    }

    #[test]
    fn list_headers_use_the_long_form_from_15_elements() {
        assert_eq!(list_header(3), [0x3C]);
        assert_eq!(list_header(14), [0xEC]);
        assert_eq!(list_header(15), [0xFC, 15]);
        assert_eq!(list_header(300), [0xFC, 0xAC, 0x02]);
    }
}
