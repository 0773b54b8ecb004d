//! Format descriptors and the registry that detects a format from its first bytes.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::{
    CopyFn, Error, FormatOption, Query, ReadOptions, RecordingReader, RecordingWriter, Result,
    ResultExt, SpecialOutput, Validator,
};

/// How many head bytes detection reads at most.
pub const PROBE_LEN: usize = 4096;

/// Static facts about a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatInfo {
    /// Short id used on the command line (`usvlog`, `carla`, ...).
    pub id: &'static str,
    /// Human-readable name.
    pub name: &'static str,
    /// File name extensions, without the dot; only a tie-breaker for detection.
    pub extensions: &'static [&'static str],
}

/// How sure a format is that some bytes belong to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Score {
    /// Not this format.
    No,
    /// Possibly this format; higher is surer (255: a full magic matched).
    Yes(u8),
}

/// Which detection pass a format belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The format has a magic number; tried first.
    Magic,
    /// Recognised by heuristics only; tried when no magic matched.
    Heuristic,
}

/// Opens a recording at a path (a file or a directory).
pub type OpenFn = fn(&Path, &ReadOptions) -> Result<Box<dyn RecordingReader>>;
/// Creates a recording at a path, with the options of this write (whether to replace an
/// existing output, the format's own options).
pub type CreateFn = fn(&Path, &crate::WriteOptions) -> Result<Box<dyn RecordingWriter>>;

/// Everything the registry needs to know about one format, and everything the format can do.
/// Each format crate exports one as `FORMAT`.
///
/// Start from [`FormatDescriptor::new`] and fill in what the format offers, so that new
/// capabilities added here later leave existing formats unchanged:
///
/// ```
/// use recfmt_core::{FormatDescriptor, FormatInfo, Score, Tier};
/// # fn open(_: &std::path::Path, _: &recfmt_core::ReadOptions) -> recfmt_core::Result<Box<dyn recfmt_core::RecordingReader>> { unimplemented!() }
/// static FORMAT: FormatDescriptor = FormatDescriptor {
///     score_dir: None,
///     ..FormatDescriptor::new(
///         FormatInfo { id: "demo", name: "Demo", extensions: &["demo"] },
///         Tier::Magic,
///         |head| if head.starts_with(b"DEMO") { Score::Yes(255) } else { Score::No },
///         open,
///     )
/// };
/// assert!(FORMAT.capabilities().is_empty());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FormatDescriptor {
    /// Static facts.
    pub info: FormatInfo,
    /// Detection pass.
    pub tier: Tier,
    /// Scores the first bytes (at most [`PROBE_LEN`]) of a file.
    pub score: fn(head: &[u8]) -> Score,
    /// Scores a directory, for formats stored as a directory of files.
    pub score_dir: Option<fn(&Path) -> Score>,
    /// Opens a reader.
    pub open: OpenFn,
    /// Creates a writer, when the format can be written from the generic model.
    pub create: Option<CreateFn>,
    /// Options the format understands when opened or written ([`ReadOptions::format_options`]).
    pub options: &'static [FormatOption],
    /// Copies a recording of this format record for record.
    pub copy: Option<CopyFn>,
    /// Checks of its own for `validate`.
    pub validate: Option<Validator>,
    /// Outputs it writes in its own way (`convert` targets).
    pub outputs: &'static [SpecialOutput],
    /// Named queries.
    pub queries: &'static [Query],
}

impl FormatDescriptor {
    /// A format that can be detected and read, and nothing else yet.
    pub const fn new(
        info: FormatInfo,
        tier: Tier,
        score: fn(&[u8]) -> Score,
        open: OpenFn,
    ) -> Self {
        FormatDescriptor {
            info,
            tier,
            score,
            score_dir: None,
            open,
            create: None,
            options: &[],
            copy: None,
            validate: None,
            outputs: &[],
            queries: &[],
        }
    }

    /// The names of what the format can do besides reading: `write`, `copy`, `validate`,
    /// `options`, `outputs`, `queries` (in that order, only those it has). The facade adds
    /// what its front-end hooks do (`recover`, `state-at`).
    pub fn capabilities(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let has = [
            ("write", self.create.is_some()),
            ("copy", self.copy.is_some()),
            ("validate", self.validate.is_some()),
            ("options", !self.options.is_empty()),
            ("outputs", !self.outputs.is_empty()),
            ("queries", !self.queries.is_empty()),
        ];
        for (name, yes) in has {
            if yes {
                out.push(name);
            }
        }
        out
    }

    /// True when `convert` can write this format (from the generic model or as a copy).
    pub fn is_target(&self) -> bool {
        self.create.is_some() || self.copy.is_some()
    }

    /// The named query `name`.
    pub fn query(&self, name: &str) -> Option<&'static Query> {
        self.queries.iter().find(|q| q.name == name)
    }
}

/// A set of formats to detect and open.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    formats: Vec<&'static FormatDescriptor>,
}

impl Registry {
    /// Adds a format.
    pub fn register(&mut self, format: &'static FormatDescriptor) -> &mut Self {
        self.formats.push(format);
        self
    }

    /// All registered formats, in registration order.
    pub fn formats(&self) -> &[&'static FormatDescriptor] {
        &self.formats
    }

    /// The format with id `id`.
    pub fn by_id(&self, id: &str) -> Option<&'static FormatDescriptor> {
        self.formats
            .iter()
            .copied()
            .find(|f| f.info.id.eq_ignore_ascii_case(id))
    }

    fn ids(&self) -> Vec<&'static str> {
        self.formats.iter().map(|f| f.info.id).collect()
    }

    /// Picks the format of a file from its first bytes. Content beats the extension, which only
    /// breaks ties.
    pub fn detect(
        &self,
        head: &[u8],
        extension: Option<&str>,
    ) -> Result<&'static FormatDescriptor> {
        self.pick(|f| (f.score)(head), extension)
    }

    fn pick(
        &self,
        score: impl Fn(&FormatDescriptor) -> Score,
        extension: Option<&str>,
    ) -> Result<&'static FormatDescriptor> {
        for tier in [Tier::Magic, Tier::Heuristic] {
            let best = self
                .formats
                .iter()
                .copied()
                .filter(|f| f.tier == tier)
                .filter_map(|f| match score(f) {
                    Score::No => None,
                    Score::Yes(s) => {
                        let ext_match = extension.is_some_and(|e| {
                            f.info.extensions.iter().any(|x| x.eq_ignore_ascii_case(e))
                        });
                        Some(((s, ext_match), f))
                    }
                })
                .max_by_key(|(key, _)| *key);
            if let Some((_, f)) = best {
                return Ok(f);
            }
        }
        Err(Error::UnknownFormat { tried: self.ids() })
    }

    /// Detects the format of a file or directory.
    pub fn detect_path(&self, path: &Path) -> Result<&'static FormatDescriptor> {
        let meta = std::fs::metadata(path).in_file(path)?;
        check_input_kind(path)?;
        if meta.is_dir() {
            return self
                .pick(
                    |f| f.score_dir.map_or(Score::No, |score_dir| score_dir(path)),
                    None,
                )
                .in_file(path);
        }
        let mut head = Vec::with_capacity(PROBE_LEN);
        File::open(path)
            .and_then(|f| f.take(PROBE_LEN as u64).read_to_end(&mut head))
            .in_file(path)?;
        let extension = path.extension().and_then(|e| e.to_str());
        self.detect(&head, extension).in_file(path)
    }

    /// Opens a recording, detecting its format unless `forced` names one. Every error, of the
    /// opening or of the reads after it, names the file.
    pub fn open_path(
        &self,
        path: &Path,
        forced: Option<&str>,
        options: &ReadOptions,
    ) -> Result<Box<dyn RecordingReader>> {
        check_input_kind(path)?;
        let format = match forced {
            Some(id) => self.by_id(id).ok_or_else(|| {
                Error::invalid(format!(
                    "unknown format id {id:?} (known: {})",
                    self.ids().join(", ")
                ))
            })?,
            None => self.detect_path(path)?,
        };
        let resolved = self.resolve_options(format, options)?;
        let reader = (format.open)(path, &resolved).in_file(path)?;
        Ok(Box::new(crate::in_file::InFile::new(path, reader)))
    }

    /// `options` with the format options narrowed to those of `format` (unqualified, checked).
    pub fn resolve_options(
        &self,
        format: &FormatDescriptor,
        options: &ReadOptions,
    ) -> Result<ReadOptions> {
        let mut resolved = options.clone();
        resolved.format_options = options
            .format_options
            .resolve(format.info.id, format.options)?;
        Ok(resolved)
    }

    /// The options for writing `format`: `replace`, and those of `options` meant for it
    /// (keys qualified with its id, and plain keys it knows; plain keys it does not know are
    /// left to the format being read), checked.
    pub fn write_options(
        &self,
        format: &FormatDescriptor,
        replace: crate::Replace,
        options: &crate::FormatOptions,
    ) -> Result<crate::WriteOptions> {
        narrowed(format.info.id, format.options, replace, options)
    }

    /// The options for writing the format output `output` (`mat.version`): `replace`, and
    /// those of `options` qualified with the output's id or plain keys it knows, checked
    /// against its [`SpecialOutput::options`].
    pub fn output_write_options(
        &self,
        output: &SpecialOutput,
        replace: crate::Replace,
        options: &crate::FormatOptions,
    ) -> Result<crate::WriteOptions> {
        narrowed(output.id, output.options, replace, options)
    }

    /// The format output with id `id` that declares options of its own, if any.
    fn output_with_options(&self, id: &str) -> Option<&'static SpecialOutput> {
        self.formats
            .iter()
            .flat_map(|f| f.outputs.iter())
            .find(|o| !o.options.is_empty() && o.id.eq_ignore_ascii_case(id))
    }

    /// Checks format options before anything is read: every qualified key names a registered
    /// format that knows it, every plain key is known to some format, and values fit.
    pub fn check_options(&self, options: &crate::FormatOptions) -> Result<()> {
        for (key, value) in options.pairs() {
            if let Some((id, plain)) = key.split_once('.')
                && self.by_id(id).is_none()
                && let Some(output) = self.output_with_options(id)
            {
                crate::FormatOptions::new()
                    .push(plain, value)
                    .resolve(output.id, output.options)?;
                continue;
            }
            let (format, key) = match key.split_once('.') {
                Some((id, key)) => (
                    Some(self.by_id(id).ok_or_else(|| {
                        Error::invalid(format!(
                            "option {id}.{key}: unknown format id {id:?} (known: {})",
                            self.ids().join(", ")
                        ))
                    })?),
                    key,
                ),
                None => (None, key),
            };
            let specs: Vec<(&str, &FormatOption)> = self
                .formats
                .iter()
                .filter(|f| format.is_none_or(|g| g.info.id == f.info.id))
                .flat_map(|f| f.options.iter().map(move |o| (f.info.id, o)))
                .chain(
                    // A plain key may be an option of a format output (`version` of `mat`).
                    self.formats
                        .iter()
                        .filter(|_| format.is_none())
                        .flat_map(|f| f.outputs.iter())
                        .flat_map(|out| out.options.iter().map(move |o| (out.id, o))),
                )
                .filter(|(_, o)| o.key == key)
                .collect();
            let Some((id, spec)) = specs.first() else {
                return Err(Error::invalid(format!(
                    "no format has an option {key:?} (see `recfmt formats`)"
                )));
            };
            spec.kind
                .check(value)
                .map_err(|e| Error::invalid(format!("{id} option {key}={value}: {e}")))?;
        }
        Ok(())
    }
}

/// Refuses inputs that are neither regular files nor folders: a device such as `/dev/zero`
/// never ends and a FIFO without a writer never answers, so reading (or hashing) one would
/// not finish. Paths that do not exist are left to the format, which may read siblings.
pub fn check_input_kind(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(Error::invalid(format!(
            "{} is not a regular file or folder (a device, FIFO or socket); recordings are read from files",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// The options of `options` meant for `id` (keys qualified with it, and plain keys `known`
/// holds), checked against `known`, with `replace`.
fn narrowed(
    id: &str,
    known: &[FormatOption],
    replace: crate::Replace,
    options: &crate::FormatOptions,
) -> Result<crate::WriteOptions> {
    let mut mine = crate::FormatOptions::new();
    for (key, value) in options.pairs() {
        let wanted = match key.split_once('.') {
            Some((qualifier, _)) => qualifier.eq_ignore_ascii_case(id),
            None => known.iter().any(|o| o.key == key),
        };
        if wanted {
            mine.push(key, value);
        }
    }
    Ok(crate::WriteOptions {
        replace,
        format_options: mine.resolve(id, known)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_open(_: &Path, _: &ReadOptions) -> Result<Box<dyn RecordingReader>> {
        Err(Error::invalid("test format"))
    }

    const fn format(
        id: &'static str,
        extensions: &'static [&'static str],
        tier: Tier,
        score: fn(&[u8]) -> Score,
    ) -> FormatDescriptor {
        FormatDescriptor::new(
            FormatInfo {
                id,
                name: id,
                extensions,
            },
            tier,
            score,
            no_open,
        )
    }

    static MAGIC_A: FormatDescriptor = format("a", &["a"], Tier::Magic, |h| {
        if h.starts_with(b"AAAA") {
            Score::Yes(255)
        } else {
            Score::No
        }
    });
    static MAGIC_B: FormatDescriptor = format("b", &["b"], Tier::Magic, |h| {
        if h.starts_with(b"AA") {
            Score::Yes(100)
        } else {
            Score::No
        }
    });
    static TEXT_C: FormatDescriptor = format("c", &["c"], Tier::Heuristic, |h| {
        if h.is_ascii() {
            Score::Yes(10)
        } else {
            Score::No
        }
    });
    static TEXT_D: FormatDescriptor = format("d", &["d"], Tier::Heuristic, |h| {
        if h.is_ascii() {
            Score::Yes(10)
        } else {
            Score::No
        }
    });

    fn registry() -> Registry {
        let mut r = Registry::default();
        r.register(&MAGIC_A)
            .register(&MAGIC_B)
            .register(&TEXT_C)
            .register(&TEXT_D);
        r
    }

    #[test]
    fn content_beats_the_extension() {
        let r = registry();
        assert_eq!(r.detect(b"AAAA....", Some("b")).unwrap().info.id, "a");
        assert_eq!(r.detect(b"AAxx", Some("a")).unwrap().info.id, "b");
    }

    #[test]
    fn magic_tier_wins_over_heuristics_and_the_extension_breaks_ties() {
        let r = registry();
        assert_eq!(r.detect(b"AAAA", Some("c")).unwrap().info.id, "a");
        assert_eq!(r.detect(b"text", Some("d")).unwrap().info.id, "d");
        assert_eq!(r.detect(b"text", Some("c")).unwrap().info.id, "c");
    }

    #[test]
    fn unknown_input_names_every_format_tried() {
        let err = registry().detect(&[0xff, 0xfe], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a recognised recording (tried: a, b, c, d)"
        );
        assert_eq!(err.kind(), crate::ErrorKind::UnknownFormat);
    }

    #[test]
    fn a_forced_format_is_looked_up_by_id() {
        let r = registry();
        assert_eq!(r.by_id("B").unwrap().info.id, "b");
        let err = r.open_path(
            Path::new("/nonexistent"),
            Some("zz"),
            &ReadOptions::default(),
        );
        assert!(err.is_err_and(|e| e.to_string().contains("known: a, b, c, d")));
    }

    static WITH_OPTION: FormatDescriptor = FormatDescriptor {
        options: &[crate::FormatOption {
            key: "build",
            kind: crate::OptionKind::Text,
            default: None,
            help: "",
        }],
        ..format("opt", &[], Tier::Magic, |_| Score::No)
    };

    #[test]
    fn options_are_checked_against_the_registered_formats() {
        let mut r = registry();
        r.register(&WITH_OPTION);
        let mut ok = crate::FormatOptions::new();
        ok.push("opt.build", "1").push("build", "2");
        assert!(r.check_options(&ok).is_ok());
        let mut unknown_format = crate::FormatOptions::new();
        unknown_format.push("zz.build", "1");
        assert!(
            r.check_options(&unknown_format)
                .is_err_and(|e| e.to_string().contains("unknown format id \"zz\""))
        );
        let mut unknown_key = crate::FormatOptions::new();
        unknown_key.push("a.build", "1");
        assert!(r.check_options(&unknown_key).is_err());
        assert_eq!(WITH_OPTION.capabilities(), ["options"]);
        assert!(!WITH_OPTION.is_target());
    }
}
