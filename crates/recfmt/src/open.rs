//! Opening recordings the way every front door does: a forced or detected format, generic
//! read options and the format's own options.

use std::path::{Path, PathBuf};

use recfmt_core::{FormatDescriptor, FormatOptions, ReadOptions, Registry};

use crate::{Recording, Result};

/// How to open a recording: what `--format`, `--strict`, `--resync`, `--layout` and
/// `--opt key=value` say on the command line.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Use this format id instead of detecting it.
    pub format: Option<String>,
    /// Treat deviations from the spec (torn records, wrong payload lengths) as errors.
    pub strict: bool,
    /// After a corrupt length field, scan forward for the next plausible record.
    pub resync: bool,
    /// Record layout files for record types recfmt does not know.
    pub layouts: Vec<PathBuf>,
    /// Format options: `carla.build=0.9.10`, `nanover.version=1`, … (see
    /// [`recfmt_core::FormatOptions`]).
    pub format_options: FormatOptions,
    /// Stops every read of a recording opened with these options at its next record or
    /// batch once cancelled (a Ctrl-C); the call then fails with an I/O error of kind
    /// `Interrupted`, "cancelled".
    pub cancel: Option<crate::Cancel>,
    /// Threads that share the work on one input (`None`: about one per core): a reader
    /// decodes on at most `n - 1` threads beside the caller's, a conversion encodes its
    /// tables on at most `n` writers (at most 4) and compresses HDF5 chunks on `n`. `Some(1)`
    /// decodes on the caller's thread and encodes on one writer. The rows and the values
    /// written are the same either way.
    pub threads: Option<usize>,
}

impl OpenOptions {
    /// The generic read options (format options not yet narrowed to one format).
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            strict: self.strict,
            resync: self.resync,
            layouts: self.layouts.clone(),
            format_options: self.format_options.clone(),
            threads: self.threads.map(|n| n.saturating_sub(1)),
            ..ReadOptions::default()
        }
    }

    /// The read options for `format`: its own options only, checked.
    pub fn read_options_for(
        &self,
        registry: &Registry,
        format: &FormatDescriptor,
    ) -> Result<ReadOptions> {
        Ok(registry.resolve_options(format, &self.read_options())?)
    }
}

/// The format of `path`: the one `options` force, else the detected one.
pub fn format_of(
    registry: &Registry,
    path: &Path,
    options: &OpenOptions,
) -> Result<&'static FormatDescriptor> {
    Ok(match &options.format {
        Some(id) => registry.by_id(id).ok_or_else(|| {
            recfmt_core::Error::invalid(format!(
                "unknown format id {id:?} (known: {})",
                registry
                    .formats()
                    .iter()
                    .map(|f| f.info.id)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
        None => registry.detect_path(path)?,
    })
}

/// Opens the recording at `path` (a file or a directory) for reading, its format detected
/// among those of [`crate::default_registry`], with default options.
///
/// ```
/// let recording = recfmt::open("../../tests/fixtures/generated/icarec/all_types.icarec")?;
/// assert_eq!(recording.header().format, "icarec");
/// # Ok::<(), recfmt::Error>(())
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<Recording> {
    open_with(
        crate::default_registry(),
        path.as_ref(),
        &OpenOptions::default(),
    )
}

/// Opens the recording at `path` (a file or a directory) for reading, with the formats of
/// `registry` and `options` (a forced format, strictness, layouts, format options).
pub fn open_with(registry: &Registry, path: &Path, options: &OpenOptions) -> Result<Recording> {
    registry.check_options(&options.format_options)?;
    if let Some(cancel) = &options.cancel {
        cancel.check()?;
    }
    let reader = registry.open_path(path, options.format.as_deref(), &options.read_options())?;
    let reader: Box<dyn recfmt_core::RecordingReader> = match &options.cancel {
        Some(cancel) => Box::new(crate::cancel::CancellableReader {
            inner: reader,
            cancel: cancel.clone(),
        }),
        None => reader,
    };
    Ok(Recording::new(path, reader))
}
