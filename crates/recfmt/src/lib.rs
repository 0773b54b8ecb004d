//! recfmt reads, writes, checks and converts simulation and vehicle recordings.
//!
//! This facade re-exports the format crates behind one feature each and assembles the
//! [`default_registry`], which detects a recording's format from its first bytes. The `recfmt`
//! command line (feature `cli`, on by default) is built on it.
//!
//! | format | feature | crate |
//! |---|---|---|
//! | USVLOG (`timeseries.bin` + `meta.json`) | `usvlog` | [`recfmt_tlv`] |
//! | CARLA recorder log | `carla` | [`recfmt_carla`] |
//! | FlightGear flight recorder tape | `fgtape` | [`recfmt_fgtape`] |
//! | ICAREC recording directory (Icarus) | `icarec` | [`recfmt_icarec`] |
//! | Icarus HDF5 recording (what the simulator writes today) | `icarec` (id `icarus-h5`) | [`recfmt_icarec::h5`] |
//! | NanoVer `.traj` / `.state` / `.nanover.zip` | `nanover` | [`recfmt_nanover`] |
//!
//! ```
//! let registry = recfmt::default_registry();
//! let format = registry.detect(b"USVLOG\x01\x00\x00\x00\x01", None).unwrap();
//! assert_eq!(format.info.id, "usvlog");
//! assert!(registry.detect(b"hello", None).is_err());
//! ```

//!
//! # Reading a stream as Arrow record batches
//!
//! [`RecordingReader::read_batches`](recfmt_core::RecordingReader::read_batches) fills typed
//! column buffers, many rows of a stream at a time; [`recfmt_export::record_batch`] turns them
//! into Arrow record batches without copying. Streams that are not wanted are skipped (formats
//! with fixed layouts do not even decode them).
//!
//! ```
//! use std::sync::Arc;
//! use recfmt::core::{BatchSet, ReadOptions};
//!
//! let path = std::path::Path::new("../../tests/fixtures/generated/usvlog/all_types");
//! let mut reader = recfmt::default_registry().open_path(path, None, &ReadOptions::default())?;
//! let schema = reader.schema().clone();
//! let nav = schema.stream_index("REC_NAV_SOLUTION").ok_or("no such stream")?;
//! let arrow_schema = Arc::new(recfmt::export::arrow_schema(reader.header(), &schema.streams[nav]));
//!
//! let mut batches = BatchSet::with_streams(&schema, 64, |stream| stream == nav);
//! let mut rows = 0;
//! loop {
//!     let more = reader.read_batches(&mut batches)?;
//!     if !batches.stream(nav).is_empty() && (batches.is_full() || !more) {
//!         let batch = recfmt::export::record_batch(&arrow_schema, batches.take(nav))?;
//!         assert!(batch.num_rows() <= 64);
//!         rows += batch.num_rows();
//!     }
//!     if !more {
//!         break;
//!     }
//! }
//! assert_eq!(rows, 200);
//! assert!(reader.integrity().status.name() == "complete");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::LazyLock;

#[cfg(any(feature = "plot", feature = "export-mcap"))]
pub mod pictures;

#[cfg(feature = "carla")]
pub use recfmt_carla as carla;
pub use recfmt_core as core;
pub use recfmt_export as export;
#[cfg(feature = "fgtape")]
pub use recfmt_fgtape as fgtape;
#[cfg(feature = "icarec")]
pub use recfmt_icarec as icarec;
#[cfg(feature = "nanover")]
pub use recfmt_nanover as nanover;
#[cfg(feature = "plot")]
pub use recfmt_plot as plot;
#[cfg(feature = "usvlog")]
pub use recfmt_tlv as tlv;

use recfmt_core::Registry;

/// Every format compiled into this build, detected in registration order of preference.
pub fn default_registry() -> &'static Registry {
    static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
        #[allow(unused_mut)]
        let mut registry = Registry::default();
        #[cfg(feature = "usvlog")]
        registry.register(&recfmt_tlv::FORMAT);
        #[cfg(feature = "carla")]
        registry.register(&recfmt_carla::FORMAT);
        #[cfg(feature = "fgtape")]
        registry.register(&recfmt_fgtape::FORMAT);
        #[cfg(feature = "icarec")]
        registry.register(&recfmt_icarec::FORMAT);
        #[cfg(feature = "icarec")]
        registry.register(&recfmt_icarec::HDF5_FORMAT);
        #[cfg(feature = "nanover")]
        registry.register(&recfmt_nanover::FORMAT);
        registry
    });
    &REGISTRY
}

/// The version of recfmt, for provenance metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Copies a recording into the same format through its faithful low-level reader and writer,
/// so the copy holds exactly the records of the source (for FlightGear tapes: the same
/// decompressed content). Returns `Ok(None)` when this build has no faithful copy for
/// `format`; callers then go through the generic model.
///
/// A CARLA log or FlightGear tape that ends early is copied up to its last complete record
/// (CARLA: packet, FlightGear: frame; a FlightGear tape keeps its three containers, the cut
/// one with its size field set to the frames kept), and the returned [`Integrity`] says what
/// was lost; CARLA logs that end inside a frame (without its FrameEnd packet) are truncated
/// too. A FlightGear tape cut inside its header cannot be copied: that is an error.
///
/// The output appears only when complete (written under a temporary name).
///
/// [`Integrity`]: recfmt_core::Integrity
pub fn copy_faithfully(
    format: &str,
    source: &std::path::Path,
    target: &std::path::Path,
) -> recfmt_core::Result<Option<recfmt_core::Integrity>> {
    use recfmt_core::{Integrity, ResultExt};
    match format {
        #[cfg(feature = "usvlog")]
        "usvlog" => {
            recfmt_tlv::copy_session(source, target).in_file(source)?;
            Ok(Some(Integrity::default()))
        }
        #[cfg(feature = "carla")]
        "carla" => Ok(Some(copy_carla(source, target).in_file(source)?)),
        #[cfg(feature = "fgtape")]
        "fgtape" => {
            let (tape, cut) =
                recfmt_fgtape::normal::NormalTape::open_lenient(source).in_file(source)?;
            let out = recfmt_core::AtomicFile::create(target).in_file(target)?;
            let out = tape.write_gzip(out).in_file(target)?;
            out.commit().in_file(target)?;
            let mut integrity = Integrity::default();
            if let Some(e) = cut {
                let kept: usize = tape.frame_counts().iter().sum();
                integrity.truncate(e.offset().map_or(0, |o| o.get()), 0);
                integrity.warn(format!(
                    "{}: {e}; the copy keeps the {kept} complete frames",
                    source.display()
                ));
            }
            Ok(Some(integrity))
        }
        #[cfg(feature = "icarec")]
        "icarec" => {
            recfmt_icarec::copy_recording(source, target, &Default::default()).in_file(source)?;
            Ok(Some(Integrity::default()))
        }
        #[cfg(feature = "nanover")]
        "nanover" => {
            recfmt_nanover::copy_recording(source, target).in_file(source)?;
            Ok(Some(Integrity::default()))
        }
        _ => {
            let _ = (source, target);
            Ok(None)
        }
    }
}

/// The CARLA part of [`copy_faithfully`]: every complete packet, up to a torn one.
#[cfg(feature = "carla")]
fn copy_carla(
    source: &std::path::Path,
    target: &std::path::Path,
) -> Result<recfmt_core::Integrity, recfmt_carla::Error> {
    use recfmt_carla::{Error, Packet};
    let mut integrity = recfmt_core::Integrity::default();
    let file = std::io::BufReader::new(std::fs::File::open(source)?);
    let mut reader = recfmt_carla::Reader::new(file);
    let header = reader.read_header()?;
    let flavour = reader.detect_flavour()?;
    let out = recfmt_core::AtomicFile::create(target)?;
    let mut writer = recfmt_carla::Writer::new(out, flavour);
    writer.write_header(&header)?;
    let mut packet = Packet::default();
    // The frame being copied (id, offset of its FrameStart) until its FrameEnd.
    let mut open_frame = None;
    loop {
        match reader.read_packet(&mut packet) {
            Ok(0) => break,
            Ok(_) => {}
            Err(Error::Truncated {
                what,
                offset,
                available,
                ..
            }) => {
                integrity.truncate(offset, available);
                integrity.warn(format!(
                    "{}: truncated {what} at byte {offset}: the copy ends with the packet before it",
                    source.display()
                ));
                open_frame = None;
                break;
            }
            Err(e) => return Err(e),
        }
        match &packet {
            Packet::FrameStart(f) => open_frame = Some((f.id, reader.last_packet_offset())),
            Packet::FrameEnd => open_frame = None,
            _ => {}
        }
        writer.write_packet(&packet)?;
    }
    if let Some((id, start)) = open_frame {
        let end = reader.position();
        integrity.truncate(end, 0);
        integrity.warn(format!(
            "{}: the file ends inside frame {id} (FrameStart at byte {start}): expected a FrameEnd packet at byte {end}",
            source.display()
        ));
    }
    writer.into_inner()?.commit()?;
    Ok(integrity)
}
