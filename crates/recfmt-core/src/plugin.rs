//! What a format can do besides reading and writing the generic model, declared in its
//! [`FormatDescriptor`](crate::FormatDescriptor) and carried out by the format crate itself:
//! typed options, extra validation, faithful copies, outputs of its own and named queries. Front ends (the command line, the Python package) find all of it through the
//! [`Registry`](crate::Registry) and never name a format.

use std::io::Write;
use std::path::Path;

use crate::{DType, Error, Integrity, ReadOptions, RecordingReader, Result, Value, WriteOptions};

/// The kind of value a format option or query parameter takes; values are checked against it
/// before the format sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// Any text (the format parses and checks it).
    Text,
    /// A file path.
    Path,
    /// An integer in `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A number (`f64`).
    Number,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// `true` or `false` (a flag on the command line).
    Flag,
}

impl OptionKind {
    /// Checks `value` against this kind; the error says what was expected.
    pub fn check(self, value: &str) -> std::result::Result<(), String> {
        match self {
            OptionKind::Text | OptionKind::Path => Ok(()),
            OptionKind::Integer { min, max } => match value.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(()),
                _ => Err(format!("expected an integer in {min}..={max}")),
            },
            OptionKind::Number => value
                .parse::<f64>()
                .map(|_| ())
                .map_err(|_| "expected a number".to_owned()),
            OptionKind::Choice(words) => {
                if words.contains(&value) {
                    Ok(())
                } else {
                    Err(format!("expected one of {}", words.join(", ")))
                }
            }
            OptionKind::Flag => match value {
                "true" | "false" => Ok(()),
                _ => Err("expected true or false".to_owned()),
            },
        }
    }
}

/// One option a format understands when it opens or writes (`--opt carla.build=0.9.10`), or
/// one parameter of a named query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatOption {
    /// The key, without the format id (`build`).
    pub key: &'static str,
    /// What values it takes.
    pub kind: OptionKind,
    /// The value used when none is given, if any.
    pub default: Option<&'static str>,
    /// What it does, one sentence.
    pub help: &'static str,
}

/// Format options as a user gave them: `key=value` pairs, where a key is either qualified by a
/// format id (`carla.build`: applies only when that format is read or written) or plain
/// (`build`: applies to the format at hand, which must know it). Repeating a key adds values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormatOptions {
    pairs: Vec<(String, String)>,
}

impl FormatOptions {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key = value`.
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.pairs.push((key.into(), value.into()));
        self
    }

    /// Adds one `key=value` text, as the command line's `--opt` takes it.
    pub fn push_pair(&mut self, text: &str) -> Result<&mut Self> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| Error::invalid(format!("option {text:?}: expected key=value")))?;
        Ok(self.push(key.trim(), value.trim()))
    }

    /// True when no option was given.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Every pair, in the order given.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The last value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in the order given.
    pub fn get_all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key` as an integer (already checked when resolved for a format).
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    /// The value of `key` as a number.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    /// The value of a flag: true when given as `true`.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key) == Some("true")
    }

    /// The options that apply to format `id` with these `known` options, keys unqualified and
    /// values checked; a plain key `id` does not know, or a bad value, is an error.
    /// Qualified keys of other formats are left out.
    pub fn resolve(&self, id: &str, known: &[FormatOption]) -> Result<FormatOptions> {
        let mut out = FormatOptions::new();
        for (key, value) in &self.pairs {
            let key = match key.split_once('.') {
                Some((format, key)) if format.eq_ignore_ascii_case(id) => key,
                Some(_) => continue,
                None => key.as_str(),
            };
            let spec = known.iter().find(|o| o.key == key).ok_or_else(|| {
                let keys: Vec<_> = known.iter().map(|o| o.key).collect();
                Error::invalid(format!(
                    "{id} has no option {key:?} (its options: {})",
                    if keys.is_empty() {
                        "none".to_owned()
                    } else {
                        keys.join(", ")
                    }
                ))
            })?;
            spec.kind
                .check(value)
                .map_err(|e| Error::invalid(format!("{id} option {key}={value}: {e}")))?;
            out.push(key, value.clone());
        }
        Ok(out)
    }

    /// The values of `known` parameters with their defaults filled in, as for a query.
    pub fn with_defaults(&self, known: &[FormatOption]) -> FormatOptions {
        let mut out = FormatOptions::new();
        for spec in known {
            if self.get(spec.key).is_none()
                && let Some(default) = spec.default
            {
                out.push(spec.key, default);
            }
        }
        out.pairs.extend(self.pairs.iter().cloned());
        out
    }
}

/// Copies a recording into the same format through its faithful low-level reader and writer
/// (every record, unknown ones kept). The target appears only when complete, replacing an
/// existing one only as `write` allows.
pub type CopyFn =
    fn(source: &Path, target: &Path, options: &ReadOptions, write: &WriteOptions) -> Result<Copied>;

/// What a faithful copy did.
#[derive(Debug, Clone, Default)]
pub struct Copied {
    /// How it copied, for people, e.g. `"copied run.log to out.log packet for packet"`: the
    /// format knows whether that was byte for byte, record for record or (a `.nanover.zip`
    /// into `.traj` + `.state`) message by message.
    pub summary: String,
    /// What a damaged source lost.
    pub integrity: Integrity,
}

/// What a format-specific output or check wrote or found, for the caller to report.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Lines for people (`"wrote x.h5 (2 sessions, …)"`, `"note: …"`), in order.
    pub notes: Vec<String>,
    /// What the input lost, when the output knows better than the reader it came from; `None`
    /// leaves it to that reader's integrity.
    pub integrity: Option<Integrity>,
}

/// Checks a reference (`validate --against SCHEMA`) before the recording is read; returns
/// the reference's own problems.
pub type AgainstFn = fn(reference: &Path, options: &ReadOptions) -> Result<Vec<String>>;

/// Format-specific checks `validate` runs besides reading every row.
#[derive(Debug, Clone, Copy)]
pub struct Validator {
    /// Checks the reference a recording is validated against (`validate --against SCHEMA`)
    /// before the recording is read: an unusable reference is an error, and the problems of a
    /// usable one are returned. `None` when the format has no such references.
    pub against: Option<AgainstFn>,
    /// Checks the recording after the generic scan (digests, record checkers, compatibility
    /// with the reference).
    pub check: fn(path: &Path, against: Option<&Path>, options: &ReadOptions) -> Result<Findings>,
}

/// What a format's own checks found.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Problems: the recording is INVALID.
    pub problems: Vec<String>,
    /// Remarks that do not make it invalid.
    pub notes: Vec<String>,
    /// The result of checking against a reference, when one was given.
    pub compatibility: Option<Compatibility>,
}

/// The result of checking a recording against a reference.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compatibility {
    /// False when the recording cannot be used where the reference is expected.
    pub compatible: bool,
    /// The report as one JSON object (text).
    pub json: String,
    /// The report as text for people (ends with a newline).
    pub text: String,
}

/// A column a format needs from a table (a trajectories CSV or Parquet file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableColumn {
    /// Column name.
    pub name: &'static str,
    /// The type its values are cast to ([`DType::F64`], [`DType::U32`], [`DType::Str`], …).
    pub dtype: DType,
    /// A missing column, or a missing value in a row, is an error.
    pub required: bool,
}

/// Reads tables of kinds a format crate does not read itself (Parquet, provided by the facade
/// so format crates stay free of Arrow).
pub trait TableReader: Sync {
    /// Extensions (without the dot) of the tables this reader opens.
    fn extensions(&self) -> &[&'static str];

    /// Calls `row` with the values of `columns` (cast to their types; `Value::Null` for a
    /// missing optional value) for every row of the table at `path`, in order.
    fn for_each_row(
        &self,
        path: &Path,
        columns: &[TableColumn],
        row: &mut dyn FnMut(&[Value]) -> Result<()>,
    ) -> Result<()>;
}

/// Where a format's own output takes its input from.
#[derive(Debug, Clone, Copy)]
pub enum OutputSource {
    /// The rows of any recording, after selection (FlightGear's KML/GPX tracks).
    Rows(
        fn(
            reader: &mut dyn RecordingReader,
            output: &Path,
            options: &ReadOptions,
            write: &WriteOptions,
        ) -> Result<Written>,
    ),
    /// A recording of this very format, converted whole (no selection, range or merge). An
    /// output with the id of a generic target (`hdf5`) replaces it for such recordings.
    Own {
        /// What it converts, for the error when the input is something else
        /// (`"NanoVer recordings (.traj/.state)"`).
        accepts: &'static str,
        /// Writes `output` from the recording at `input`.
        write: fn(
            input: &Path,
            output: &Path,
            options: &ReadOptions,
            write: &WriteOptions,
        ) -> Result<Written>,
    },
    /// A table of rows (CARLA logs from trajectories): inputs with these extensions are read
    /// by the format itself, others through the [`TableReader`] given.
    Table {
        /// Extensions the format reads itself (`csv`).
        extensions: &'static [&'static str],
        /// Writes `output` from the table at `input`.
        write: fn(
            input: &Path,
            output: &Path,
            options: &ReadOptions,
            write: &WriteOptions,
            tables: &dyn TableReader,
        ) -> Result<Written>,
    },
}

/// An output a format writes in its own way: a `convert` target.
#[derive(Debug, Clone, Copy)]
pub struct SpecialOutput {
    /// Target id (`kml`, `nanover-zip`, `hdf5`, `carla`).
    pub id: &'static str,
    /// What it writes, one sentence.
    pub help: &'static str,
    /// The extension of its single output file, if it writes one (for naming the outputs of
    /// several inputs: `DIR/<input>.kml`).
    pub file_extension: Option<&'static str>,
    /// What it reads and how it writes.
    pub source: OutputSource,
    /// Options of its own, qualified by its id (`--opt mat.version=5`), checked before
    /// anything is read and handed to it in [`WriteOptions::format_options`] (see
    /// [`Registry::output_write_options`](crate::Registry::output_write_options)).
    pub options: &'static [FormatOption],
}

/// How a query prints its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryForm {
    /// Text for people (for CARLA: what the simulator itself prints).
    Text,
    /// One JSON document.
    Json,
}

/// A named query over a recording (CARLA's `info`, `collisions`, `blocked`).
#[derive(Debug, Clone, Copy)]
pub struct Query {
    /// Name (`collisions`).
    pub name: &'static str,
    /// What it answers, one sentence.
    pub help: &'static str,
    /// Its parameters, with defaults.
    pub params: &'static [FormatOption],
    /// Runs it on the recording at `path`, writing the answer to `out`. `params` hold every
    /// parameter with a default, checked. An input the query cannot answer for is an error
    /// (after whatever the query printed).
    pub run:
        fn(path: &Path, params: &FormatOptions, form: QueryForm, out: &mut dyn Write) -> Result<()>,
}

#[cfg(test)]
mod tests {
    use super::*;

    static OPTIONS: [FormatOption; 2] = [
        FormatOption {
            key: "version",
            kind: OptionKind::Integer { min: 1, max: 2 },
            default: None,
            help: "",
        },
        FormatOption {
            key: "mode",
            kind: OptionKind::Choice(&["a", "b"]),
            default: Some("a"),
            help: "",
        },
    ];

    fn options(pairs: &[&str]) -> FormatOptions {
        let mut o = FormatOptions::new();
        for p in pairs {
            o.push_pair(p).unwrap();
        }
        o
    }

    #[test]
    fn options_of_other_formats_are_left_out_and_plain_keys_must_be_known() {
        let o = options(&["x.version=1", "y.version=9", "mode=b"]);
        let resolved = o.resolve("x", &OPTIONS).unwrap();
        assert_eq!(resolved.get_i64("version"), Some(1));
        assert_eq!(resolved.get("mode"), Some("b"));
        assert_eq!(resolved.pairs().count(), 2, "y.version is not x's");

        let err = options(&["speed=3"]).resolve("x", &OPTIONS).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x has no option \"speed\" (its options: version, mode)"
        );
        let err = options(&["x.version=3"])
            .resolve("x", &OPTIONS)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "x option version=3: expected an integer in 1..=2"
        );
        assert!(options(&["mode=c"]).resolve("x", &OPTIONS).is_err());
        assert!(FormatOptions::new().push_pair("novalue").is_err());
    }

    #[test]
    fn defaults_fill_what_was_not_given() {
        let filled = FormatOptions::new().with_defaults(&OPTIONS);
        assert_eq!(filled.get("mode"), Some("a"));
        assert_eq!(filled.get("version"), None);
        let given = options(&["mode=b"]).with_defaults(&OPTIONS);
        assert_eq!(given.get("mode"), Some("b"));
    }

    #[test]
    fn option_kinds_check_values() {
        assert!(OptionKind::Number.check("-61.5").is_ok());
        assert!(OptionKind::Number.check("loud").is_err());
        assert!(OptionKind::Flag.check("true").is_ok());
        assert!(OptionKind::Flag.check("yes").is_err());
        assert!(OptionKind::Text.check("anything").is_ok());
    }
}
