//! recfmt reads, writes, checks and converts simulation and vehicle recordings.
//!
//! This facade re-exports the format crates behind one feature each, assembles the
//! [`default_registry`] (which detects a recording's format from its first bytes and knows
//! what each format can do), and is the one front door of every front end: the `recfmt`
//! command line (feature `cli`) and the Python package call the same
//! functions, which take plain option structs and return reports (serializable as the JSON
//! the command line prints). They print nothing and never exit; errors are [`Error`] values.
//!
//! | task | call | report |
//! |---|---|---|
//! | open a recording | [`open`], [`open_with`] | a [`Recording`] |
//! | read a stream as Arrow | [`Recording::batches`], [`Recording::stream_batches`] | a [`Batches`] (`RecordBatchReader`) |
//! | summarise it | [`inspect::info`] | [`inspect::InfoReport`] |
//! | what formats can do | [`inspect::formats`], [`convert::targets`] | [`inspect::FormatSummary`] |
//! | check it | [`validate::validate`] | [`validate::ValidateReport`] |
//! | convert it | [`convert::convert`], [`convert::convert_many`] | [`convert::ConvertReport`] |
//! | repair it | [`ops::recover`] | [`ops::RecoverReport`] |
//! | a format's queries | [`ops::query`] | text or JSON |
//! | the state at a time | [`inspect::state_at`], [`inspect::state_at_time`] | [`inspect::StateReport`] |
//!
//! Format-specific behaviour (options such as CARLA's `build`, ICAREC's compatibility
//! checks, FlightGear's KML tracks, CARLA's queries) is declared in each format's
//! [`core::FormatDescriptor`] and reached only through the registry, so a format registered
//! at run time is converted the same way as the built-in ones. What only the front ends use
//! (NanoVer's recovery, ICAREC's state at a time) is in [`front_end`], by format id:
//!
//! ```no_run
//! use recfmt::convert::{ConvertOptions, convert};
//! let registry = recfmt::default_registry();
//! let options = ConvertOptions { target: "parquet".into(), ..Default::default() };
//! let report = convert(registry, "run1".as_ref(), "out".as_ref(), &options, None)?;
//! for line in &report.notes {
//!     println!("{line}");
//! }
//! # Ok::<(), recfmt::Error>(())
//! ```
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
//! The default features are the library: every format above (`all-formats`) and every table
//! output (`export-parquet`, `export-csv`, `export-arrow`, `export-ndjson`, `export-hdf5`).
//! Pictures (`plot`), MCAP output (`mcap`) and the command line (`cli`, which turns both on)
//! are opt-in.
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
//! [`Recording::batches`] reads one stream as an Arrow `RecordBatchReader`; streams that are
//! not wanted are skipped (formats with fixed layouts do not even decode them).
//! [`BatchOptions`] select columns and a time range, [`Recording::stream_batches`] reads
//! several streams in one pass. The iterators' errors are Arrow errors holding an [`Error`]
//! ([`Batches`] shows how to get it back).
//!
//! ```
//! let path = "../../tests/fixtures/generated/usvlog/all_types";
//! let batches = recfmt::open(path)?.batches("REC_NAV_SOLUTION")?;
//! let rows: usize = batches.map(|b| b.map(|b| b.num_rows())).sum::<Result<_, _>>()?;
//! assert_eq!(rows, 200);
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

mod cancel;
pub mod convert;
mod error;
pub mod front_end;
pub mod inspect;
mod open;
pub mod ops;
mod recording;
mod report;
mod tables;
pub mod validate;

pub use cancel::Cancel;
pub use error::{Error, Result};
pub use open::{OpenOptions, format_of, open, open_with};
pub use recording::{BatchOptions, Batches, Recording, StreamBatches};
pub use report::{EXIT_DATA_LOST, EXIT_ERROR, IntegrityReport, Outcome, to_json};
pub use tables::Tables;

use recfmt_core::Registry;

/// Every format compiled into this build, detected in registration order of preference.
/// Adding a format is one line here (and its crate as a dependency).
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

/// Copies a recording into the same format through its faithful low-level reader and writer
/// (the format descriptor's `copy`), so the copy holds exactly the records of the source (for
/// FlightGear tapes: the same decompressed content). Returns `Ok(None)` when the default
/// registry has no faithful copy for `format`; callers then go through the generic model.
///
/// A CARLA log or FlightGear tape that ends early is copied up to its last complete record,
/// and the returned [`Integrity`] says what was lost. The output appears only when complete,
/// and never replaces an existing file.
///
/// [`Integrity`]: recfmt_core::Integrity
pub fn copy_faithfully(
    format: &str,
    source: &std::path::Path,
    target: &std::path::Path,
) -> recfmt_core::Result<Option<recfmt_core::Integrity>> {
    match default_registry().by_id(format).and_then(|f| f.copy) {
        Some(copy) => copy(
            source,
            target,
            &Default::default(),
            &recfmt_core::WriteOptions::default(),
        )
        .map(|c| Some(c.integrity)),
        None => Ok(None),
    }
}
