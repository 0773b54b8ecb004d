//! Temporary benchmark (to be deleted).
#![allow(missing_docs, clippy::unwrap_used)]
#[cfg(feature = "hdf5")]
fn main() {
    use recfmt_core::*;
    use recfmt_export::StreamBatcher;
    use recfmt_export::hdf5::*;
    let rows: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let path = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let mut s = StreamDesc::new(
        "Vehicle/Nav",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    for n in ["pos", "noise", "acc"] {
        s.signals.push(SignalDesc::scalar(n, DType::F64));
    }
    s.signals.push(SignalDesc::scalar("temp", DType::F32));
    s.signals.push(SignalDesc::scalar("count", DType::I64));
    s.signals.push(SignalDesc::scalar("flag", DType::Bool));
    s.signals.push(SignalDesc::scalar("state", DType::Str));
    s.signals
        .push(SignalDesc::scalar("v", DType::F64).with_shape(Shape::Fixed(vec![3])));
    let header = Header {
        format: "bench",
        ..Header::default()
    };
    let streams = [s];
    let mut w = Hdf5Writer::create(&path, &header, &streams, &Hdf5Options::default()).unwrap();
    let mut b = StreamBatcher::new(&header, &streams[0], 65_536);
    let mut row = FrameBuf::default();
    row.reset(0, 9);
    let mut x: u64 = 1;
    let t0 = std::time::Instant::now();
    for i in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = i as f64;
        row.values[0] = Value::UInt(i * 10_000);
        row.values[1] = Value::Float((f * 1e-4).sin());
        row.values[2] = Value::Float((x >> 11) as f64 / (1u64 << 53) as f64);
        row.values[3] = Value::Float((i % 1000) as f64);
        row.values[4] = Value::Float(f64::from(20.0f32 + (i % 100) as f32 * 0.5));
        row.values[5] = Value::Int(i as i64);
        row.values[6] = Value::Bool(i % 7 == 0);
        row.values[7].set_str(if i % 3 == 0 { "cruise" } else { "hover" });
        let a = row.values[8].f64_array();
        a.extend_from_slice(&[f, -f, 0.5]);
        b.push(&row).unwrap();
        if b.is_full() {
            w.write_batch(0, &b.finish_batch().unwrap()).unwrap();
        }
    }
    w.write_batch(0, &b.finish_batch().unwrap()).unwrap();
    w.finish().unwrap();
    eprintln!("{rows} rows in {:?}", t0.elapsed());
}
#[cfg(not(feature = "hdf5"))]
fn main() {}
