//! The one rule that makes output names unique: table columns, JSON keys, HDF5 links and
//! output file stems (see [`column_names`]).

use std::collections::HashSet;

use recfmt_core::StreamDesc;

/// Schema metadata key (Parquet, Arrow IPC, MCAP channel metadata) present when a column does
/// not carry its signal's name: a JSON object from each such column's name to the signal's
/// name, e.g. `{"t_2":"t"}`. (HDF5 keeps each dataset's `original_name` instead.)
pub const RENAMED_COLUMNS_KEY: &str = "recfmt.renamed_columns";

/// Names handed out so far, each unique (ignoring case when asked, for file systems that do).
#[derive(Debug, Default)]
pub(crate) struct UniqueNames {
    taken: HashSet<String>,
    ignore_case: bool,
}

impl UniqueNames {
    /// Names unique as they are spelt.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Names unique when case is ignored (file names).
    pub(crate) fn ignoring_case() -> Self {
        UniqueNames {
            taken: HashSet::new(),
            ignore_case: true,
        }
    }

    fn key(&self, name: &str) -> String {
        if self.ignore_case {
            name.to_lowercase()
        } else {
            name.to_owned()
        }
    }

    /// `base` when it is still free, else the first free of `base_2`, `base_3`, ...; taken from
    /// then on.
    pub(crate) fn claim(&mut self, base: &str) -> String {
        let mut candidate = base.to_owned();
        let mut n = 2u64;
        while !self.taken.insert(self.key(&candidate)) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        candidate
    }
}

/// The output column name of each of `stream`'s signals, in signal order, unique among
/// themselves and unequal to every name in `reserved`.
///
/// A recording may hold two signals of one name, or a signal named like a column an output
/// adds or keeps for itself (an ICAREC signal `t` beside the time column `t`, a signal
/// `stream` beside the `stream` key of `recfmt cat --output ndjson`, a signal `source` beside
/// a partitioned dataset's `source` column). Two columns of one name are unreadable (pyarrow:
/// "Multiple matches for FieldRef.Name(t)"; a JSON object keeps only the last), so every
/// output names its columns by this one rule: the names the output reserves come first, then
/// the time column, then every other signal in order; a name already taken gets `_2`, `_3`,
/// ... (the first that is free). Output file stems and HDF5 links follow the same rule. The
/// tables record what was renamed under [`RENAMED_COLUMNS_KEY`].
///
/// ```
/// use recfmt_core::{DType, SignalDesc, StreamDesc, TimeBase};
/// let mut dynamic = StreamDesc::new("dynamic", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
/// dynamic.signals.push(SignalDesc::scalar("t", DType::F64));
/// dynamic.signals.push(SignalDesc::scalar("stream", DType::F64));
/// assert_eq!(recfmt_export::column_names(&dynamic, &[]), ["t", "t_2", "stream"]);
/// assert_eq!(recfmt_export::column_names(&dynamic, &["stream"]), ["t", "t_2", "stream_2"]);
/// ```
pub fn column_names(stream: &StreamDesc, reserved: &[&str]) -> Vec<String> {
    column_names_from(stream, reserved, str::to_owned)
}

/// [`column_names`] of names first made fit for the output by `base` (HDF5 link names).
pub(crate) fn column_names_from(
    stream: &StreamDesc,
    reserved: &[&str],
    base: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut names = UniqueNames::new();
    for name in reserved {
        names.claim(name);
    }
    let mut out = vec![String::new(); stream.signals.len()];
    if let Some(time) = stream.signals.get(stream.time) {
        out[stream.time] = names.claim(&base(&time.name));
    }
    for (i, signal) in stream.signals.iter().enumerate() {
        if i != stream.time {
            out[i] = names.claim(&base(&signal.name));
        }
    }
    out
}

/// The value of [`RENAMED_COLUMNS_KEY`] for `stream` written with column `names`, or `None`
/// when every column carries its signal's name.
pub fn renamed_columns(stream: &StreamDesc, names: &[String]) -> Option<String> {
    let renamed: serde_json::Map<String, serde_json::Value> = stream
        .signals
        .iter()
        .zip(names)
        .filter(|(signal, name)| signal.name != **name)
        .map(|(signal, name)| (name.clone(), signal.name.clone().into()))
        .collect();
    (!renamed.is_empty()).then(|| serde_json::Value::Object(renamed).to_string())
}

#[cfg(test)]
mod tests {
    use recfmt_core::{DType, SignalDesc, TimeBase};

    use super::*;

    fn stream(names: &[&str], time: usize) -> StreamDesc {
        let mut desc = StreamDesc::new(
            "s",
            SignalDesc::scalar(names[0], DType::F64),
            TimeBase::SECONDS,
        );
        desc.signals.extend(
            names[1..]
                .iter()
                .map(|n| SignalDesc::scalar(*n, DType::F64)),
        );
        desc.time = time;
        desc
    }

    #[test]
    fn the_time_column_keeps_its_name_wherever_it_is() {
        let desc = stream(&["t", "x", "t"], 2);
        assert_eq!(column_names(&desc, &[]), ["t_2", "x", "t"]);
        assert_eq!(
            renamed_columns(&desc, &column_names(&desc, &[])).as_deref(),
            Some(r#"{"t_2":"t"}"#)
        );
    }

    #[test]
    fn renamed_names_skip_names_already_taken() {
        let desc = stream(&["t", "t_2", "t", "t"], 0);
        assert_eq!(column_names(&desc, &[]), ["t", "t_2", "t_3", "t_4"]);
        let desc = stream(&["t", "x"], 0);
        assert_eq!(renamed_columns(&desc, &column_names(&desc, &[])), None);
    }

    #[test]
    fn reserved_names_are_never_handed_out() {
        let desc = stream(&["source", "source", "source_2"], 0);
        assert_eq!(
            column_names(&desc, &["source"]),
            ["source_2", "source_3", "source_2_2"]
        );
    }

    #[test]
    fn case_is_ignored_when_asked() {
        let mut names = UniqueNames::ignoring_case();
        assert_eq!(names.claim("a"), "a");
        assert_eq!(names.claim("A"), "A_2");
        let mut names = UniqueNames::new();
        assert_eq!(names.claim("a"), "a");
        assert_eq!(names.claim("A"), "A");
    }
}
