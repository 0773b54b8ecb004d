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

use std::sync::LazyLock;

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
/// The output appears only when complete (written under a temporary name).
pub fn copy_faithfully(
    format: &str,
    source: &std::path::Path,
    target: &std::path::Path,
) -> recfmt_core::Result<Option<()>> {
    use recfmt_core::ResultExt;
    match format {
        #[cfg(feature = "usvlog")]
        "usvlog" => {
            recfmt_tlv::copy_session(source, target).in_file(source)?;
            Ok(Some(()))
        }
        #[cfg(feature = "carla")]
        "carla" => {
            let run = || -> Result<(), recfmt_carla::Error> {
                let file = std::io::BufReader::new(std::fs::File::open(source)?);
                let mut reader = recfmt_carla::Reader::new(file);
                let header = reader.read_header()?;
                let flavour = reader.detect_flavour()?;
                let out = recfmt_core::AtomicFile::create(target)?;
                let mut writer = recfmt_carla::Writer::new(out, flavour);
                writer.write_header(&header)?;
                let mut packet = recfmt_carla::Packet::default();
                while reader.read_packet(&mut packet)? > 0 {
                    writer.write_packet(&packet)?;
                }
                writer.into_inner()?.commit()?;
                Ok(())
            };
            run().in_file(source)?;
            Ok(Some(()))
        }
        #[cfg(feature = "fgtape")]
        "fgtape" => {
            let tape = recfmt_fgtape::normal::NormalTape::open(source).in_file(source)?;
            let out = recfmt_core::AtomicFile::create(target).in_file(target)?;
            let out = tape.write_gzip(out).in_file(target)?;
            out.commit().in_file(target)?;
            Ok(Some(()))
        }
        #[cfg(feature = "icarec")]
        "icarec" => {
            recfmt_icarec::copy_recording(source, target, &Default::default()).in_file(source)?;
            Ok(Some(()))
        }
        #[cfg(feature = "nanover")]
        "nanover" => {
            recfmt_nanover::copy_recording(source, target).in_file(source)?;
            Ok(Some(()))
        }
        _ => {
            let _ = (source, target);
            Ok(None)
        }
    }
}
