//! `validate`: read a recording completely, with the format's own checks, and report every
//! problem found.

use std::path::{Path, PathBuf};

use recfmt_core::{Registry, ResultExt};
use serde::Serialize;

use crate::inspect::scan;
use crate::{Error, IntegrityReport, OpenOptions, Outcome, Result};

/// What to validate with.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// How to open the recording.
    pub open: OpenOptions,
    /// Also check the recording against this reference (ICAREC: a current `schema.json`).
    pub against: Option<PathBuf>,
}

/// What `validate` found.
#[derive(Debug, Clone, Serialize)]
pub struct ValidateReport {
    /// The path as given.
    pub path: String,
    /// Format id.
    pub format: String,
    /// Format version.
    pub version: String,
    /// No data lost and no problem found.
    pub valid: bool,
    /// Rows read.
    pub rows: u64,
    /// Problems: the recording is INVALID.
    pub problems: Vec<String>,
    /// Remarks that do not make it invalid.
    pub notes: Vec<String>,
    /// What reading lost.
    pub integrity: IntegrityReport,
    /// The result of checking against the reference, as the format reports it (JSON).
    pub compatibility: Option<serde_json::Value>,
    /// The same for people.
    #[serde(skip)]
    pub compatibility_text: Option<String>,
    /// False when the recording is not compatible with the reference.
    #[serde(skip)]
    pub compatible: bool,
}

impl ValidateReport {
    /// Data lost (3) beats problems (INVALID, 1); otherwise complete (0). An incompatible
    /// recording is also reported by [`ValidateReport::compatible`].
    pub fn outcome(&self) -> Outcome {
        if self.integrity.lost_data {
            Outcome::DataLost
        } else if self.problems.is_empty() {
            Outcome::Complete
        } else {
            Outcome::Invalid
        }
    }

    /// The report as one JSON object (keys sorted, pretty).
    pub fn to_json(&self) -> String {
        crate::report::to_json(self)
    }
}

impl std::fmt::Display for ValidateReport {
    /// The text `recfmt validate` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{}: {} {}",
            self.path,
            self.format,
            if self.valid { "valid" } else { "INVALID" }
        )?;
        writeln!(f, "rows: {}", self.rows)?;
        for p in &self.problems {
            writeln!(f, "problem: {p}")?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        write!(f, "{}", self.integrity)?;
        if let Some(text) = &self.compatibility_text {
            write!(f, "{text}")?;
        }
        Ok(())
    }
}

/// Reads the recording at `path` completely and runs its format's own checks (ICAREC:
/// checksums, digests and compatibility with `against`; NanoVer: its record checker).
///
/// A reference to check against must itself be usable: it is checked before the recording
/// is read, and an unusable one is an error.
pub fn validate(
    registry: &Registry,
    path: &Path,
    options: &ValidateOptions,
) -> Result<ValidateReport> {
    registry.check_options(&options.open.format_options)?;
    let mut problems: Vec<String> = Vec::new();
    let mut reference_problems = Vec::new();
    if let Some(reference) = &options.against {
        let format = crate::format_of(registry, path, &options.open)?;
        let against = format.validate.and_then(|v| v.against).ok_or_else(|| {
            Error::Invalid(format!(
                "{} recordings cannot be checked against a reference ({} given)",
                format.info.id,
                reference.display()
            ))
        })?;
        let read = options.open.read_options_for(registry, format)?;
        reference_problems = against(reference, &read)?;
    }
    let mut reader = crate::open_with(registry, path, &options.open)?.into_reader();
    // The format's own checks (ICAREC: SHA-256 of every data file; NanoVer: its record
    // checker) read the input a second time and do not depend on the scan, so they run on
    // another thread beside it: validate takes the longer of the two, not their sum.
    let validator = registry
        .by_id(reader.header().format)
        .and_then(|format| Some((format, format.validate?)));
    let check = match validator {
        Some((format, validator)) => Some((
            validator.check,
            options.open.read_options_for(registry, format)?,
        )),
        None => None,
    };
    let (stats, findings) = std::thread::scope(|scope| {
        let findings = check.map(|(check, read)| {
            let against = options.against.as_deref();
            scope.spawn(move || check(path, against, &read))
        });
        let stats = scan(reader.as_mut()).in_file(path);
        let findings = findings.map(|handle| {
            handle.join().unwrap_or_else(|_| {
                Err(recfmt_core::Error::invalid(format!(
                    "the format's own checks of {} stopped unexpectedly",
                    path.display()
                )))
            })
        });
        (stats, findings)
    });
    // A failed read is reported before a failed check, as when they ran one after the other
    // (it waits for the check to end: the check cannot be interrupted).
    let stats = stats?;
    let findings = findings.transpose()?;
    for (desc, s) in reader.schema().streams.iter().zip(&stats.streams) {
        if s.backwards > 0 {
            problems.push(format!(
                "stream {}: time goes backwards {} times",
                desc.name, s.backwards
            ));
        }
    }
    problems.extend(reference_problems);
    let mut notes = Vec::new();
    let mut compatibility = None;
    if let Some(findings) = findings {
        problems.extend(findings.problems);
        notes.extend(findings.notes);
        compatibility = findings.compatibility;
    }
    let integrity: IntegrityReport = reader.integrity().into();
    Ok(ValidateReport {
        path: path.display().to_string(),
        format: reader.header().format.to_string(),
        version: reader.header().version.clone(),
        valid: !integrity.lost_data && problems.is_empty(),
        rows: stats.rows(),
        problems,
        notes,
        integrity,
        compatible: compatibility.as_ref().is_none_or(|c| c.compatible),
        compatibility_text: compatibility.as_ref().map(|c| c.text.clone()),
        compatibility: compatibility
            .as_ref()
            .and_then(|c| serde_json::from_str(&c.json).ok()),
    })
}
