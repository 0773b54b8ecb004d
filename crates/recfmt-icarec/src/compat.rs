//! Compatibility of a recording with the schema of the simulator that will use it (upstream
//! `20_recording.md` §3 and `Simulator::ValidateRecording`).
//!
//! | situation | result |
//! |---|---|
//! | same `schema_version`, same signals | compatible, no issue |
//! | recording newer (same major), extra signals | compatible; the extra signals are ignored (info) |
//! | current signal missing from the recording, `default` declared | warning: the default is used |
//! | current signal missing, no default, `required` (the default) | error |
//! | current signal missing, no default, `"required": false` | info: left at its initial value |
//! | same signal, different type (or size) | error naming the signal and both types |
//! | same signal, different units | error |
//! | same signal, lifecycle changed | warning |
//! | major versions differ (minor for 0.x) | error: breaking change |
//! | a `breaking_changes` entry of the current schema applies | error |
//! | recording older than `min_schema_version` / Icarus older than `min_icarus_version` | error |
//! | recording says `warmstart_compatible: false` | error |

use std::fmt;

use semver::Version;
use serde::Serialize;
use serde_json::Value;

use crate::schema::{SchemaDoc, SignalSpec};
use crate::types::SignalType;

/// How serious an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to do.
    Info,
    /// Warmstart works, with a substitution (a default value).
    Warning,
    /// Warmstart cannot use this recording.
    Error,
}

impl Severity {
    /// `info`, `warning` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What kind of issue was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// The recording's schema is newer than the current one (same major version).
    NewerRecording,
    /// The recording's schema is older than the current one (same major version).
    OlderRecording,
    /// The major versions differ: a breaking change.
    MajorVersion,
    /// The recording is older than the current schema's minimum.
    BelowMinimum,
    /// A `breaking_changes` entry of the current schema applies to the recording.
    BreakingChange,
    /// The recording declares itself unusable for warmstart.
    NotWarmstartCompatible,
    /// A recorded signal the current schema does not have (ignored).
    ExtraSignal,
    /// A current signal the recording lacks; its default is used.
    MissingWithDefault,
    /// A required current signal the recording lacks, with no default.
    MissingRequired,
    /// A current signal the recording lacks that warmstart does not need.
    MissingOptional,
    /// Same name, different type or size.
    TypeMismatch,
    /// Same name, different units.
    UnitMismatch,
    /// Same name, static in one schema and dynamic in the other.
    LifecycleChange,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompatIssue {
    /// How serious it is.
    pub severity: Severity,
    /// What kind it is.
    pub code: IssueCode,
    /// The signal concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// What the recording has (a type, unit, version, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<String>,
    /// What the current schema has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// A sentence saying all of it.
    pub message: String,
}

impl fmt::Display for CompatIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.name(), self.message)
    }
}

/// The result of [`validate_against`]: serialisable with serde, printable as text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompatReport {
    /// True when there is no error.
    pub compatible: bool,
    /// The recording's `schema_version`.
    pub recording_version: String,
    /// The current `schema_version`.
    pub current_version: String,
    /// Every finding, errors first.
    pub issues: Vec<CompatIssue>,
}

impl CompatReport {
    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &CompatIssue> {
        self.issues.iter().filter(|i| i.severity == Severity::Error)
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &CompatIssue> {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Warning)
    }

    /// The report as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl fmt::Display for CompatReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors = self.errors().count();
        let warnings = self.warnings().count();
        writeln!(
            f,
            "recording schema {} against current schema {}: {} ({errors} errors, {warnings} warnings)",
            self.recording_version,
            self.current_version,
            if self.compatible {
                "compatible"
            } else {
                "incompatible"
            }
        )?;
        for issue in &self.issues {
            writeln!(f, "  {issue}")?;
        }
        Ok(())
    }
}

fn type_of(spec: &SignalSpec) -> SignalType {
    SignalType::parse(&spec.type_name).unwrap_or_else(|| SignalType::Opaque(spec.type_name.clone()))
}

fn same_major(a: &Version, b: &Version) -> bool {
    a.major == b.major && (a.major != 0 || a.minor == b.minor)
}

/// Checks a recording's schema against the current simulator's schema.
///
/// ```
/// use recfmt_icarec::{Lifecycle, SchemaBuilder, SignalType, validate_against};
/// let recorded = SchemaBuilder::new("1.2.0", "0.5.0", "2026-02-16T12:00:00Z")?
///     .signal("Vehicle.Aero.alpha", SignalType::Double, Lifecycle::Dynamic, "rad")
///     .build()?;
/// let current = SchemaBuilder::new("1.2.0", "0.5.0", "2026-02-16T12:00:00Z")?
///     .signal("Vehicle.Aero.alpha", SignalType::Vec3, Lifecycle::Dynamic, "rad")
///     .build()?;
/// let report = validate_against(recorded.doc(), current.doc());
/// assert!(!report.compatible);
/// assert_eq!(
///     report.issues[0].message,
///     "type mismatch for 'Vehicle.Aero.alpha': recording=double, current=Vec3<double>"
/// );
/// # Ok::<(), recfmt_icarec::Error>(())
/// ```
pub fn validate_against(recording: &SchemaDoc, current: &SchemaDoc) -> CompatReport {
    let mut issues = Vec::new();
    let mut push = |severity,
                    code,
                    signal: Option<&str>,
                    rec: Option<String>,
                    cur: Option<String>,
                    message: String| {
        issues.push(CompatIssue {
            severity,
            code,
            signal: signal.map(str::to_string),
            recording: rec,
            current: cur,
            message,
        });
    };
    let rv = &recording.schema_version;
    let cv = &current.schema_version;

    // Versions.
    if !same_major(rv, cv) {
        push(
            Severity::Error,
            IssueCode::MajorVersion,
            None,
            Some(rv.to_string()),
            Some(cv.to_string()),
            format!(
                "breaking schema change: recording schema {rv} and current schema {cv} differ in their major version"
            ),
        );
    } else if rv > cv {
        push(
            Severity::Info,
            IssueCode::NewerRecording,
            None,
            Some(rv.to_string()),
            Some(cv.to_string()),
            format!(
                "recording schema {rv} is newer than current schema {cv}; additive changes are ignored"
            ),
        );
    } else if rv < cv {
        push(
            Severity::Info,
            IssueCode::OlderRecording,
            None,
            Some(rv.to_string()),
            Some(cv.to_string()),
            format!("recording schema {rv} is older than current schema {cv}"),
        );
    }
    if let Some(min) = &current.compatibility.min_schema_version
        && rv < min
    {
        push(
            Severity::Error,
            IssueCode::BelowMinimum,
            None,
            Some(rv.to_string()),
            Some(min.to_string()),
            format!("recording schema {rv} is too old (minimum compatible schema: {min})"),
        );
    }
    if let Some(min) = &current.compatibility.min_icarus_version
        && recording.icarus_version < *min
    {
        let iv = &recording.icarus_version;
        push(
            Severity::Error,
            IssueCode::BelowMinimum,
            None,
            Some(iv.to_string()),
            Some(min.to_string()),
            format!("recording made by Icarus {iv} is too old (minimum compatible Icarus: {min})"),
        );
    }
    if !recording.compatibility.warmstart_compatible {
        push(
            Severity::Error,
            IssueCode::NotWarmstartCompatible,
            None,
            Some("false".into()),
            None,
            "the recording is marked warmstart_compatible: false (some required inputs were not recorded)".into(),
        );
    }
    for change in &current.compatibility.breaking_changes {
        if let Some((signal, text)) = breaking_change_applies(change, recording, current) {
            push(
                Severity::Error,
                IssueCode::BreakingChange,
                signal.as_deref(),
                Some(rv.to_string()),
                Some(cv.to_string()),
                format!("breaking change after recording schema {rv}: {text}"),
            );
        }
    }

    // Signals present in both, and extra recorded ones.
    for rec in &recording.signals {
        let Some(cur) = current.signal(&rec.name) else {
            push(
                Severity::Info,
                IssueCode::ExtraSignal,
                Some(&rec.name),
                Some(rec.type_name.clone()),
                None,
                format!(
                    "signal '{}' is not in the current schema and is ignored",
                    rec.name
                ),
            );
            continue;
        };
        let (rt, ct) = (type_of(rec), type_of(cur));
        if rt != ct || rec.size != cur.size {
            let show = |s: &SignalSpec, t: &SignalType| match t {
                SignalType::Opaque(_) => format!("{} ({} bytes)", s.type_name, s.size),
                t => t.name().to_string(),
            };
            let (r, c) = (show(rec, &rt), show(cur, &ct));
            push(
                Severity::Error,
                IssueCode::TypeMismatch,
                Some(&rec.name),
                Some(r.clone()),
                Some(c.clone()),
                format!(
                    "type mismatch for '{}': recording={r}, current={c}",
                    rec.name
                ),
            );
            continue;
        }
        let unit = |s: &SignalSpec| s.units.clone().unwrap_or_default();
        if unit(rec) != unit(cur) {
            push(
                Severity::Error,
                IssueCode::UnitMismatch,
                Some(&rec.name),
                Some(unit(rec)),
                Some(unit(cur)),
                format!(
                    "unit mismatch for '{}': recording={:?}, current={:?}",
                    rec.name,
                    unit(rec),
                    unit(cur)
                ),
            );
        }
        if rec.lifecycle != cur.lifecycle {
            push(
                Severity::Warning,
                IssueCode::LifecycleChange,
                Some(&rec.name),
                Some(rec.lifecycle.name().into()),
                Some(cur.lifecycle.name().into()),
                format!(
                    "signal '{}' is {} in the recording and {} in the current schema",
                    rec.name,
                    rec.lifecycle.name(),
                    cur.lifecycle.name()
                ),
            );
        }
    }

    // Current signals the recording lacks.
    for cur in &current.signals {
        if recording.signal(&cur.name).is_some() {
            continue;
        }
        match (&cur.default, cur.is_required()) {
            (Some(default), _) => push(
                Severity::Warning,
                IssueCode::MissingWithDefault,
                Some(&cur.name),
                None,
                Some(default.to_string()),
                format!("signal '{}' missing, using default: {default}", cur.name),
            ),
            (None, true) => push(
                Severity::Error,
                IssueCode::MissingRequired,
                Some(&cur.name),
                None,
                Some(cur.type_name.clone()),
                format!(
                    "required signal '{}' ({}) not in recording and no default declared",
                    cur.name, cur.type_name
                ),
            ),
            (None, false) => push(
                Severity::Info,
                IssueCode::MissingOptional,
                Some(&cur.name),
                None,
                Some(cur.type_name.clone()),
                format!(
                    "signal '{}' not in recording; not required, left at its initial value",
                    cur.name
                ),
            ),
        }
    }

    issues.sort_by_key(|i| std::cmp::Reverse(i.severity));
    CompatReport {
        compatible: !issues.iter().any(|i| i.severity == Severity::Error),
        recording_version: rv.to_string(),
        current_version: cv.to_string(),
        issues,
    }
}

/// A `breaking_changes` entry of the current schema applies to recordings older than its
/// `since` version, or, without one, to recordings older than the current schema. An entry
/// with a `signal` applies only to recordings that have that signal. A plain string is a
/// description with neither.
fn breaking_change_applies(
    change: &Value,
    recording: &SchemaDoc,
    current: &SchemaDoc,
) -> Option<(Option<String>, String)> {
    let older_than = |v: &Version| recording.schema_version < *v;
    match change {
        Value::Object(map) => {
            let since = map
                .get("since")
                .and_then(Value::as_str)
                .and_then(|s| Version::parse(s).ok())
                .unwrap_or_else(|| current.schema_version.clone());
            if !older_than(&since) {
                return None;
            }
            let signal = map
                .get("signal")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(name) = &signal
                && recording.signal(name).is_none()
            {
                return None;
            }
            let text = map
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| signal.as_ref().map(|s| format!("signal '{s}' changed")))
                .unwrap_or_else(|| change.to_string());
            Some((signal, text))
        }
        Value::String(text) => older_than(&current.schema_version).then(|| (None, text.clone())),
        other => older_than(&current.schema_version).then(|| (None, other.to_string())),
    }
}
