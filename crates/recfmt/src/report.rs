//! Pieces every report shares: how a run ended and what the input lost.

use recfmt_core::Integrity;
use serde::Serialize;

/// How a command ended when it did not fail; the command line's exit code (0, 3, 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Everything was read.
    Complete,
    /// It finished, but the input was truncated or had corrupt records.
    DataLost,
    /// `validate` found problems other than lost data: the recording is INVALID.
    Invalid,
}

/// The command line's exit code for an error (and for `validate`'s INVALID).
pub const EXIT_ERROR: u8 = 1;
/// The command line's exit code when a command finished but input data was lost.
pub const EXIT_DATA_LOST: u8 = 3;

impl Outcome {
    /// The command line's exit code for this outcome: 0, [`EXIT_DATA_LOST`] or [`EXIT_ERROR`].
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Complete => 0,
            Outcome::DataLost => EXIT_DATA_LOST,
            Outcome::Invalid => EXIT_ERROR,
        }
    }

    /// The command line's exit code for a command's result: an error is [`EXIT_ERROR`]. (The
    /// binary alone also turns a broken pipe into 0; a library caller has no pipe.)
    pub fn exit_code_of<E>(result: &std::result::Result<Outcome, E>) -> u8 {
        match result {
            Ok(outcome) => outcome.exit_code(),
            Err(_) => EXIT_ERROR,
        }
    }

    /// [`Outcome::DataLost`] when `integrity` says data was lost, else complete.
    pub fn of(integrity: &Integrity) -> Self {
        if integrity.lost_data() {
            Outcome::DataLost
        } else {
            Outcome::Complete
        }
    }
}

/// What reading a recording lost, as `info`, `validate` and `convert` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntegrityReport {
    /// `complete`, `truncated` or `corrupt`.
    pub status: &'static str,
    /// Bytes that could not be read.
    pub bytes_lost: u64,
    /// Where the input ends inside a record, if it does.
    pub truncated_at: Option<u64>,
    /// Corrupt records skipped.
    pub records_skipped: u64,
    /// What was tolerated or lost, in words.
    pub warnings: Vec<String>,
    /// True when data was lost (exit 3).
    #[serde(skip)]
    pub lost_data: bool,
}

impl From<&Integrity> for IntegrityReport {
    fn from(i: &Integrity) -> Self {
        IntegrityReport {
            status: i.status.name(),
            bytes_lost: i.bytes_lost,
            truncated_at: i.truncated_at,
            records_skipped: i.records_skipped,
            warnings: i.warnings.clone(),
            lost_data: i.lost_data(),
        }
    }
}

impl std::fmt::Display for IntegrityReport {
    /// `integrity: …` and one `  warning: …` line per warning, each ending in a newline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut line = self.status.to_string();
        if let Some(at) = self.truncated_at {
            line.push_str(&format!(", truncated at byte {at}"));
        }
        if self.bytes_lost > 0 {
            line.push_str(&format!(", {} bytes lost", self.bytes_lost));
        }
        if self.records_skipped > 0 {
            line.push_str(&format!(
                ", {} corrupt records skipped",
                self.records_skipped
            ));
        }
        writeln!(f, "integrity: {line}")?;
        for w in &self.warnings {
            writeln!(f, "  warning: {w}")?;
        }
        Ok(())
    }
}

/// A report as the JSON document the command line prints: keys sorted, pretty.
pub fn to_json<T: Serialize>(report: &T) -> String {
    // Through `Value` so that object keys come out sorted, as they always have.
    serde_json::to_value(report)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}
