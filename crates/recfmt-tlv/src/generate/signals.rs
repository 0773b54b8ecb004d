//! Sessions of measured-looking signals for the side-by-side benchmarks (issue 24): three
//! record types of float32 values, one record of each per 20 ms step, the values either
//! standard-normal (white noise, which no encoder compresses well) or a random walk (a
//! cumulative sum of normal steps rounded to 0.01, as a slowly moving sensor reads).

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::{T0_US, pretty, session_meta};
use crate::error::Result;
use crate::header::FileHeader;
use crate::io::Writer;
use crate::record::Record;

/// Step between two records of one type (50 Hz).
pub const SIGNAL_DT_US: u64 = 20_000;

/// The record types of a signal session: type id, name and float32 values per record.
const SIGNAL_TYPES: [(u16, &str, usize); 3] = [
    (101, "REC_SIG_A", 4),
    (102, "REC_SIG_B", 3),
    (103, "REC_SIG_C", 3),
];

/// The values a signal session holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// Independent standard-normal samples.
    WhiteNoise,
    /// A cumulative sum of standard-normal steps, rounded to 0.01.
    RandomWalk,
}

/// The layouts of [`SIGNAL_TYPES`], for `--layout`.
fn layouts_toml() -> String {
    let mut text = String::new();
    for (id, name, n) in SIGNAL_TYPES {
        text.push_str(&format!(
            "[[record]]\ntype_id = {id}\nname = \"{name}\"\nfields = [\n  {{ name = \"v\", type = \"f32\", count = {n}, unit = \"V\" }},\n]\n\n"
        ));
    }
    text
}

/// A small deterministic generator (xorshift64*) with Box-Muller normals: the same bytes on
/// every platform and run, and no dependency.
struct Normals {
    state: u64,
    spare: Option<f64>,
}

impl Normals {
    fn new(seed: u64) -> Self {
        Normals {
            state: seed | 1,
            spare: None,
        }
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let bits = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 1.0) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let (u, v) = (self.uniform(), self.uniform());
        let r = (-2.0 * u.ln()).sqrt();
        let angle = std::f64::consts::TAU * v;
        self.spare = Some(r * angle.sin());
        r * angle.cos()
    }
}

/// Writes a signal session of `steps` steps (three records each) into `dir`: `timeseries.bin`,
/// `meta.json` and `layouts.toml` (read it with `--layout <dir>/layouts.toml`). Returns the
/// size of `timeseries.bin`. 5 M steps make about 380 MB.
pub fn write_signal_session(dir: &Path, steps: u64, kind: SignalKind) -> Result<u64> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("layouts.toml"), layouts_toml())?;
    let file = std::fs::File::create(dir.join("timeseries.bin"))?;
    let mut w = Writer::new(std::io::BufWriter::with_capacity(1 << 20, file));
    w.write_header(&FileHeader::new(1, T0_US))?;
    let mut normals = Normals::new(0x5EED_0024);
    let mut walks: Vec<Vec<f64>> = SIGNAL_TYPES.iter().map(|t| vec![0.0; t.2]).collect();
    let mut record = Record {
        t_us: T0_US,
        type_id: 0,
        payload: Vec::new(),
        offset: 0,
    };
    for step in 0..steps {
        record.t_us = T0_US + step * SIGNAL_DT_US;
        for ((id, _, _), walk) in SIGNAL_TYPES.iter().zip(&mut walks) {
            record.type_id = *id;
            record.payload.clear();
            for value in walk.iter_mut() {
                let z = normals.next();
                let v = match kind {
                    SignalKind::WhiteNoise => z as f32,
                    SignalKind::RandomWalk => {
                        *value = ((*value + z) * 100.0).round() / 100.0;
                        *value as f32
                    }
                };
                record.payload.extend(v.to_le_bytes());
            }
            w.write_record(&record)?;
        }
    }
    w.into_inner()?.flush()?;
    let counts = SIGNAL_TYPES
        .iter()
        .map(|(_, name, _)| ((*name).to_owned(), json!(steps)))
        .collect();
    let t_end = T0_US + steps.saturating_sub(1) * SIGNAL_DT_US;
    std::fs::write(
        dir.join("meta.json"),
        pretty(&session_meta("recfmt_signals", counts, t_end, false)),
    )?;
    Ok(std::fs::metadata(dir.join("timeseries.bin"))?.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UsvlogRecording;
    use recfmt_core::{ArrayValue, FrameBuf, ReadOptions, RecordingReader, Value};

    /// Both kinds read back with their layouts: three streams, one row per step each, white
    /// noise spread around 0 and the walk on a 0.01 grid.
    #[test]
    fn signal_sessions_read_back() {
        for kind in [SignalKind::WhiteNoise, SignalKind::RandomWalk] {
            let dir = tempfile::tempdir().unwrap();
            write_signal_session(dir.path(), 500, kind).unwrap();
            let options = ReadOptions {
                layouts: vec![dir.path().join("layouts.toml")],
                ..ReadOptions::default()
            };
            let mut reader = UsvlogRecording::open(dir.path(), &options).unwrap();
            let mut frame = FrameBuf::default();
            let (mut rows, mut values) = (0, Vec::new());
            while reader.read_frame(&mut frame).unwrap() {
                rows += 1;
                if let Some(Value::Array(ArrayValue::F32(items))) = frame.values.get(1) {
                    values.extend(items.iter().map(|&v| f64::from(v)));
                }
            }
            assert_eq!(rows, 1500);
            assert_eq!(values.len(), 500 * 10);
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            match kind {
                SignalKind::WhiteNoise => assert!(mean.abs() < 0.1, "{mean}"),
                SignalKind::RandomWalk => assert!(
                    values
                        .iter()
                        .all(|v| ((v * 100.0).round() - v * 100.0).abs() < 1e-3)
                ),
            }
        }
    }
}
