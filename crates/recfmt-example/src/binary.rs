//! Beacon logs as fixed binary records, read streaming: the template for a fast binary reader.
//!
//! A binary beacon log is the magic `BEACONB1` (8 bytes), then one 16-byte record per ping,
//! little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | `t_us`: u64, microseconds |
//! | 8 | 4 | `beacon`: u32 |
//! | 12 | 4 | `rssi`: f32, dBm |
//!
//! It reads as one stream, `pings`, with the signals `t_us` (the time), `beacon` and `rssi`.
//! A last record cut short is kept out and reported as lost data (with `strict`, it is an
//! error naming its byte offset). The reader holds one buffer whatever the file's size.
//!
//! ```
//! use recfmt_core::{BatchSet, RecordingReader};
//! use recfmt_example::binary::{BinaryBeaconReader, write_pings};
//!
//! let mut log = Vec::new();
//! write_pings(&mut log, (0..1000u32).map(|i| (u64::from(i) * 250_000, i % 4, -60.0 - i as f32 / 100.0)))?;
//! let mut reader = BinaryBeaconReader::new(&log[..], Default::default())?;
//! let mut batches = BatchSet::new(reader.schema(), 4096);
//! assert!(!reader.read_batches(&mut batches)?);
//! assert_eq!(batches.stream(0).rows(), 1000);
//! assert!(!reader.integrity().lost_data());
//! # Ok::<(), recfmt_core::Error>(())
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use recfmt_core::{
    DType, Error, FormatDescriptor, FormatInfo, Header, Integrity, ReadOptions, RecordingReader,
    Result, ResultExt, RowWriter, Schema, Score, SignalDesc, StreamDesc, Tier, TimeBase,
};

/// The format id of binary beacon logs.
pub const BINARY_FORMAT_ID: &str = "beacon-bin";

/// The first eight bytes of every binary beacon log.
pub const BINARY_MAGIC: &[u8; 8] = b"BEACONB1";

/// Bytes of one ping record.
pub const RECORD_LEN: usize = 16;

const INFO: FormatInfo = FormatInfo {
    id: BINARY_FORMAT_ID,
    name: "Beacon log, binary records (example format)",
    extensions: &["beaconbin"],
};

/// The descriptor the registry holds: detection and opening.
pub static BINARY_FORMAT: FormatDescriptor = FormatDescriptor::new(INFO, Tier::Magic, score, open);

/// Sure (255) when the file starts with the magic, else not this format.
pub fn score(head: &[u8]) -> Score {
    if head.starts_with(BINARY_MAGIC) {
        Score::Yes(255)
    } else {
        Score::No
    }
}

fn open(path: &Path, options: &ReadOptions) -> Result<Box<dyn RecordingReader>> {
    let file = std::fs::File::open(path).in_file(path)?;
    let size = file.metadata().in_file(path)?.len();
    let mut reader = BinaryBeaconReader::new(file, options.clone()).in_file(path)?;
    reader.size = Some(size);
    Ok(Box::new(reader))
}

/// Writes a binary beacon log of `pings` (`t_us`, `beacon`, `rssi`) to `out`.
pub fn write_pings(
    mut out: impl Write,
    pings: impl IntoIterator<Item = (u64, u32, f32)>,
) -> Result<()> {
    out.write_all(BINARY_MAGIC)?;
    let mut record = [0u8; RECORD_LEN];
    for (t_us, beacon, rssi) in pings {
        record[..8].copy_from_slice(&t_us.to_le_bytes());
        record[8..12].copy_from_slice(&beacon.to_le_bytes());
        record[12..].copy_from_slice(&rssi.to_le_bytes());
        out.write_all(&record)?;
    }
    out.flush()?;
    Ok(())
}

/// Reads a binary beacon log from any [`Read`], one record at a time.
pub struct BinaryBeaconReader<R> {
    input: BufReader<R>,
    header: Header,
    schema: Schema,
    integrity: Integrity,
    strict: bool,
    /// Bytes consumed so far (the offset of the next record).
    offset: u64,
    /// The file's size, when known, for progress.
    size: Option<u64>,
}

impl<R: Read> BinaryBeaconReader<R> {
    /// Checks the magic and gets ready to read the records.
    pub fn new(input: R, options: ReadOptions) -> Result<Self> {
        let mut input = BufReader::with_capacity(256 << 10, input);
        let mut magic = [0u8; 8];
        let got = read_up_to(&mut input, &mut magic)?;
        if &magic[..got] != BINARY_MAGIC {
            return Err(Error::malformed(
                BINARY_FORMAT_ID,
                0,
                format!("the magic {:?}", String::from_utf8_lossy(BINARY_MAGIC)),
            ));
        }
        let mut stream = StreamDesc::new(
            "pings",
            SignalDesc::scalar("t_us", DType::U64).with_unit("us"),
            TimeBase::MICROSECONDS,
        );
        stream
            .signals
            .push(SignalDesc::scalar("beacon", DType::U32));
        stream
            .signals
            .push(SignalDesc::scalar("rssi", DType::F32).with_unit("dBm"));
        Ok(BinaryBeaconReader {
            input,
            header: Header {
                format: BINARY_FORMAT_ID,
                version: "1".into(),
                ..Header::default()
            },
            schema: Schema {
                streams: vec![stream],
            },
            integrity: Integrity::default(),
            strict: options.strict,
            offset: BINARY_MAGIC.len() as u64,
            size: None,
        })
    }

    /// The next record's bytes, `None` at the end (a torn last record is recorded as lost).
    #[inline]
    fn next_record(&mut self) -> Result<Option<[u8; RECORD_LEN]>> {
        let mut record = [0u8; RECORD_LEN];
        let buffered = self.input.buffer();
        if buffered.len() >= RECORD_LEN {
            record.copy_from_slice(&buffered[..RECORD_LEN]);
            self.input.consume(RECORD_LEN);
        } else {
            let got = read_up_to(&mut self.input, &mut record)?;
            if got < RECORD_LEN {
                if got == 0 {
                    return Ok(None);
                }
                if self.strict {
                    return Err(Error::malformed(
                        BINARY_FORMAT_ID,
                        self.offset,
                        format!("a {RECORD_LEN}-byte ping record, found {got} bytes"),
                    ));
                }
                self.integrity.truncate(self.offset, got as u64);
                self.integrity.warn(format!(
                    "the last record (byte {}) is cut short: {got} of {RECORD_LEN} bytes",
                    self.offset
                ));
                return Ok(None);
            }
        }
        self.offset += RECORD_LEN as u64;
        Ok(Some(record))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(got)
}

impl<R: Read + Send> RecordingReader for BinaryBeaconReader<R> {
    fn format(&self) -> &'static FormatInfo {
        &BINARY_FORMAT.info
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// One record a call, decoded field by field into the row writer: this method is the
    /// whole decode path (rows and typed columns both come from it).
    #[inline]
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let Some(record) = self.next_record()? else {
            return Ok(false);
        };
        if row.begin(0)? {
            let field = |range: std::ops::Range<usize>| {
                let mut bytes = [0u8; 8];
                bytes[..range.len()].copy_from_slice(&record[range]);
                bytes
            };
            row.push(u64::from_le_bytes(field(0..8)))?;
            let [a, b, c, d, ..] = field(8..12);
            row.push(u32::from_le_bytes([a, b, c, d]))?;
            let [a, b, c, d, ..] = field(12..16);
            row.push(f32::from_le_bytes([a, b, c, d]))?;
            row.finish()?;
        }
        Ok(true)
    }

    fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    fn progress(&self) -> (u64, Option<u64>) {
        (self.offset, self.size)
    }
}
