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
        registry
    });
    &REGISTRY
}

/// The version of recfmt, for provenance metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
