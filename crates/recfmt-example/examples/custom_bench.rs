//! The benchmark behind `cargo xtask bench custom`: a reader written only against the
//! documented trait (the binary beacon log, `read_row` alone) against the built-in USVLOG
//! reader, converting the same values to Parquet through the same front door.
//!
//! ```text
//! custom_bench generate ROWS DIR     # DIR/pings.beaconbin and DIR/usvlog/ (same pings)
//! custom_bench convert INPUT OUT [LAYOUT]   # INPUT to Parquet in OUT; prints the seconds
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use recfmt::convert::{ConvertOptions, convert};
use recfmt::tlv::io::Writer;
use recfmt::tlv::{FileHeader, Record};

/// The USVLOG record type that holds a ping, with the same fields as the binary log.
const PINGS_LAYOUT: &str = r#"[[record]]
type_id = 100
name = "pings"
fields = [ { name = "beacon", type = "u32" }, { name = "rssi", type = "f32", unit = "dBm" } ]
"#;

/// Ping `i` of the benchmark: 100 Hz, 16 beacons, a wandering signal strength.
fn ping(i: u64) -> (u64, u32, f32) {
    let t_us = 1_000_000 + i * 10_000;
    let beacon = (i.wrapping_mul(2_654_435_761) >> 7) as u32 % 16;
    let rssi = -60.0 - ((i % 997) as f32) * 0.03;
    (t_us, beacon, rssi)
}

fn generate(rows: u64, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("usvlog"))?;
    let file = std::fs::File::create(dir.join("pings.beaconbin"))?;
    recfmt_example::binary::write_pings(
        std::io::BufWriter::with_capacity(1 << 20, file),
        (0..rows).map(ping),
    )?;

    std::fs::write(dir.join("usvlog/layouts.toml"), PINGS_LAYOUT)?;
    let file = std::fs::File::create(dir.join("usvlog/timeseries.bin"))?;
    let mut writer = Writer::new(std::io::BufWriter::with_capacity(1 << 20, file));
    writer.write_header(&FileHeader::new(1, ping(0).0))?;
    let mut record = Record {
        t_us: 0,
        type_id: 100,
        payload: Vec::with_capacity(8),
        offset: 0,
    };
    for i in 0..rows {
        let (t_us, beacon, rssi) = ping(i);
        record.t_us = t_us;
        record.payload.clear();
        record.payload.extend(beacon.to_le_bytes());
        record.payload.extend(rssi.to_le_bytes());
        writer.write_record(&record)?;
    }
    writer.into_inner()?;
    Ok(())
}

fn convert_one(input: &Path, out: &Path, layout: Option<PathBuf>) -> Result<f64> {
    let mut registry = recfmt::default_registry().clone();
    registry.register(&recfmt_example::binary::BINARY_FORMAT);
    let mut options = ConvertOptions {
        target: "parquet".into(),
        ..Default::default()
    };
    options.open.layouts.extend(layout);
    let start = Instant::now();
    let report = convert(&registry, input, out, &options, None)
        .with_context(|| format!("converting {}", input.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    if report.integrity.lost_data {
        bail!("{} lost data", input.display());
    }
    Ok(seconds)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["generate", rows, dir] => generate(rows.parse()?, Path::new(dir)),
        ["convert", input, out] => {
            println!(
                "{:.4}",
                convert_one(Path::new(input), Path::new(out), None)?
            );
            Ok(())
        }
        ["convert", input, out, layout] => {
            let seconds = convert_one(Path::new(input), Path::new(out), Some(layout.into()))?;
            println!("{seconds:.4}");
            Ok(())
        }
        _ => bail!("usage: custom_bench generate ROWS DIR | convert INPUT OUT [LAYOUT]"),
    }
}
