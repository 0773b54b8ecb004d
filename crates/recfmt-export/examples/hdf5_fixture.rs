//! Writes an HDF5 file with [`recfmt_export::hdf5::Hdf5Writer`] and the same rows as NDJSON
//! (with [`recfmt_export::json::row`], as `recfmt cat --output ndjson` prints them), for
//! checking the file with h5py:
//!
//! ```text
//! cargo run -p recfmt-export --features hdf5 --example hdf5_fixture -- OUT_DIR
//! python3 tests/python/check_hdf5.py OUT_DIR/fixture.h5 OUT_DIR/fixture.ndjson
//! ```
//!
//! The data covers every dtype HDF5 stores, fixed shapes, nulls, non-finite floats, text
//! with multi-byte characters, FlightGear-style signal names with `/`, a stream of more than
//! two default chunks (65 535 rows each) and a stream without rows.

#[cfg(feature = "hdf5")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    fixture::main()
}

#[cfg(not(feature = "hdf5"))]
fn main() {
    eprintln!("this example needs the `hdf5` feature: --features hdf5");
    std::process::exit(2);
}

#[cfg(feature = "hdf5")]
mod fixture {
    use std::io::Write as _;
    use std::path::PathBuf;

    use recfmt_core::{
        ArrayValue, DType, FrameBuf, Header, Metadata, Shape, SignalDesc, StreamDesc, TimeBase,
        TimeReference, TimeSystem, Value,
    };
    use recfmt_export::StreamBatcher;
    use recfmt_export::hdf5::{Hdf5Options, Hdf5Writer};

    const LONG_ROWS: u64 = 2 * 65_535 + 1_234;

    fn streams() -> Vec<StreamDesc> {
        let mut fdm = StreamDesc::new(
            "fdm/flight",
            SignalDesc::scalar("/sim/time/elapsed-sec", DType::F64).with_unit("s"),
            TimeBase::SECONDS,
        );
        fdm.signals.extend([
            SignalDesc::scalar("/position/altitude-ft", DType::F32).with_unit("ft"),
            SignalDesc::scalar("/orientation/heading-deg", DType::F64).with_unit("deg"),
            SignalDesc::scalar("/gear/gear[0]/wow", DType::Bool),
            SignalDesc::scalar("/engines/engine/rpm", DType::U16).with_unit("rpm"),
            SignalDesc::scalar("counter", DType::I64),
        ]);

        let mut nav = StreamDesc::new(
            "NAV",
            SignalDesc::scalar("t_us", DType::U64),
            TimeBase::MICROSECONDS,
        );
        nav.signals.extend([
            SignalDesc::scalar("i8", DType::I8),
            SignalDesc::scalar("i16", DType::I16),
            SignalDesc::scalar("i32", DType::I32),
            SignalDesc::scalar("u8", DType::U8),
            SignalDesc::scalar("u32", DType::U32),
            SignalDesc::scalar("f32", DType::F32).with_unit("m/s"),
            SignalDesc::scalar("f64", DType::F64).with_unit("rad"),
            SignalDesc::scalar("text", DType::Str),
            SignalDesc::scalar("acc", DType::F32)
                .with_shape(Shape::Fixed(vec![3]))
                .with_unit("m/s^2"),
            SignalDesc::scalar("rot", DType::F64).with_shape(Shape::Fixed(vec![2, 2])),
            SignalDesc::scalar("bits", DType::Bool).with_shape(Shape::Fixed(vec![2])),
        ]);
        nav.metadata.insert("rate_hz".into(), "50".into());

        let mut quiet = StreamDesc::new(
            "quiet",
            SignalDesc::scalar("t_us", DType::U64),
            TimeBase::MICROSECONDS,
        );
        quiet
            .signals
            .push(SignalDesc::scalar("payload", DType::Bytes));
        vec![fdm, nav, quiet]
    }

    fn fdm_row(i: u64) -> FrameBuf {
        let t = i as f64 / 120.0;
        FrameBuf {
            stream: 0,
            values: vec![
                Value::Float(t),
                Value::Float(f64::from((1000.0 + t.sin() * 250.0) as f32)),
                if i % 1000 == 999 {
                    Value::Null
                } else {
                    Value::Float((t * 7.0) % 360.0)
                },
                Value::Bool(i % 5 < 2),
                Value::UInt(2000 + i % 600),
                Value::Int(i as i64 * 7_919 - 1_000_000_007),
            ],
        }
    }

    fn nav_row(i: u64) -> FrameBuf {
        let f = i as f64;
        FrameBuf {
            stream: 1,
            values: vec![
                Value::UInt(u64::MAX - 10_000_000_000 + i * 20_000),
                Value::Int(i as i64 % 256 - 128),
                Value::Int(-(i as i64) * 200),
                Value::Int(i32::MIN as i64 + i as i64),
                Value::UInt(i % 256),
                Value::UInt(u32::MAX as u64 - i),
                match i {
                    3 => Value::Null,
                    4 => Value::Float(f64::INFINITY),
                    5 => Value::Float(f64::NEG_INFINITY),
                    _ => Value::Float(f64::from((f * 0.1) as f32)),
                },
                if i == 6 {
                    Value::Float(f64::NAN)
                } else {
                    Value::Float(f / 3.0)
                },
                match i {
                    0 => Value::Str(String::new()),
                    1 => Value::Null,
                    2 => Value::Str("Größe ✓ \"quoted\" \\ back".into()),
                    3 => Value::Str("x".repeat(64)),
                    _ => Value::Str(format!("row {i}")),
                },
                if i == 8 {
                    Value::Null
                } else {
                    let g = f as f32;
                    Value::Array(ArrayValue::F32(vec![g * 0.1, -g, 9.81]))
                },
                Value::Array(ArrayValue::F64(vec![f, f / 7.0, -f, 1e-300])),
                Value::Array(ArrayValue::Bool(vec![
                    i.is_multiple_of(2),
                    i.is_multiple_of(3),
                ])),
            ],
        }
    }

    pub fn main() -> Result<(), Box<dyn std::error::Error>> {
        let out_dir = PathBuf::from(
            std::env::args()
                .nth(1)
                .ok_or("usage: hdf5_fixture OUT_DIR")?,
        );
        std::fs::create_dir_all(&out_dir)?;
        let mut metadata = Metadata::new();
        metadata.insert("generator".into(), "hdf5_fixture example".into());
        let header = Header {
            format: "fixture",
            version: "1".into(),
            time: Some(TimeReference::parse(
                TimeSystem::Utc,
                Some("2024-05-01T12:00:00Z"),
            )?),
            metadata,
        };
        let streams = streams();
        let mut options = Hdf5Options::default();
        options
            .metadata
            .insert("source.file".into(), "fixture.rec".into());

        let h5 = out_dir.join("fixture.h5");
        let mut writer = Hdf5Writer::create(&h5, &header, &streams, &options)?;
        let mut batchers: Vec<StreamBatcher> = streams
            .iter()
            .map(|s| StreamBatcher::new(&header, s, 10_000))
            .collect();
        let mut ndjson =
            std::io::BufWriter::new(std::fs::File::create(out_dir.join("fixture.ndjson"))?);
        let mut line = String::new();
        let mut nav_rows = 0;
        for i in 0..LONG_ROWS {
            let mut rows = vec![fdm_row(i)];
            if i % 1000 == 0 {
                rows.push(nav_row(nav_rows));
                nav_rows += 1;
            }
            for row in rows {
                line.clear();
                recfmt_export::json::row(&mut line, &streams[row.stream], &row.values, true);
                line.push('\n');
                ndjson.write_all(line.as_bytes())?;

                let batcher = &mut batchers[row.stream];
                batcher.push(&row)?;
                if batcher.is_full() {
                    writer.write_batch(row.stream, &batcher.finish_batch()?)?;
                }
            }
        }
        for (i, batcher) in batchers.iter_mut().enumerate() {
            if !batcher.is_empty() {
                writer.write_batch(i, &batcher.finish_batch()?)?;
            }
        }
        ndjson.flush()?;
        writer.finish()?;
        println!("wrote {} ({LONG_ROWS} + {nav_rows} rows)", h5.display());
        Ok(())
    }
}
