//! `recover` and named queries: format-specific operations found through the registry.

use std::io::Write;
use std::path::{Path, PathBuf};

use recfmt_core::{FormatOptions, QueryForm, Registry, Replace};
use serde::Serialize;

use crate::front_end::Recovered;
use crate::{Error, OpenOptions, Outcome, Result};

/// What `recover` did.
#[derive(Debug, Clone, Serialize)]
pub struct RecoverReport {
    /// The damaged input.
    pub input: PathBuf,
    /// The repaired copy.
    pub output: PathBuf,
    /// Format id.
    pub format: &'static str,
    /// What was kept and dropped (the front end renders it).
    pub recovered: Recovered,
}

impl RecoverReport {
    /// Data lost when anything was dropped or changed.
    pub fn outcome(&self) -> Outcome {
        if self.recovered.changed() {
            Outcome::DataLost
        } else {
            Outcome::Complete
        }
    }
}

/// Writes every valid record of the damaged recording at `input` into `output`, for formats
/// that can recover (NanoVer: garbage, torn tails and undecodable records dropped, timestamps
/// made strictly increasing). An existing `output` is replaced only as `replace` allows.
pub fn recover(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &OpenOptions,
    replace: Replace,
) -> Result<RecoverReport> {
    registry.check_options(&options.format_options)?;
    let format = crate::format_of(registry, input, options)?;
    let id = format.info.id;
    let Some(recover) = crate::front_end::hooks(id).and_then(|h| h.recover) else {
        let able = crate::front_end::formats_with(registry, |h| h.recover.is_some());
        return Err(Error::Invalid(format!(
            "recover is available for {} recordings; for {id}, `recfmt convert --to {id}` keeps every complete record",
            able.join(", ")
        )));
    };
    let read = options.read_options_for(registry, format)?;
    let write = registry.write_options(format, replace, &options.format_options)?;
    let recovered = recover(input, output, &read, &write)?;
    Ok(RecoverReport {
        input: input.to_path_buf(),
        output: output.to_path_buf(),
        format: id,
        recovered,
    })
}

/// Runs the named query `name` of format `format` on the recording at `path`, writing its
/// answer to `out` as text or JSON. `params` are `key=value` parameters (defaults filled in,
/// values checked). Fails, after whatever was written, when the input is not what the query
/// reads.
pub fn query(
    registry: &Registry,
    format: &str,
    name: &str,
    path: &Path,
    params: &FormatOptions,
    form: QueryForm,
    out: &mut dyn Write,
) -> Result<()> {
    let descriptor = registry
        .by_id(format)
        .ok_or_else(|| Error::Invalid(format!("unknown format id {format:?}")))?;
    let q = descriptor.query(name).ok_or_else(|| {
        let names: Vec<_> = descriptor.queries.iter().map(|q| q.name).collect();
        Error::Invalid(format!(
            "{format} has no query {name:?} (its queries: {})",
            names.join(", ")
        ))
    })?;
    let checked = params.resolve(format, q.params)?.with_defaults(q.params);
    Ok((q.run)(path, &checked, form, out)?)
}

/// [`query`] with its answer returned as a string.
pub fn query_text(
    registry: &Registry,
    format: &str,
    name: &str,
    path: &Path,
    params: &FormatOptions,
    form: QueryForm,
) -> Result<String> {
    let mut out = Vec::new();
    query(registry, format, name, path, params, form, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
