//! What the ICAREC descriptor does besides reading and writing: faithful copies, the checks
//! of `validate` (checksums, digests, compatibility with a current schema) and the state at a
//! time.

use std::io::Read;
use std::path::Path;

use recfmt_core::{
    Compatibility, Findings, Integrity, ReadOptions, ResultExt, TimeReference, TimeSystem,
    WriteOptions,
};

use crate::{Error, IcarecDir, METADATA_FILE, OpenOptions, SCHEMA_FILE, Schema, schema_checksum};

type CoreResult<T> = recfmt_core::Result<T>;

/// Copies into a temporary folder moved into place when complete (see
/// [`crate::IcarecWriter::create`] for what an existing folder gets).
pub(crate) fn copy(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> CoreResult<recfmt_core::Copied> {
    let folder =
        recfmt_core::AtomicDir::create(target, write.replace, &crate::recording::RECORDING_FILES)?;
    crate::copy_recording(source, folder.path(), &OpenOptions::default()).in_file(source)?;
    folder.commit().in_file(target)?;
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {} to {} frame for frame",
            source.display(),
            target.display()
        ),
        integrity: Integrity::default(),
    })
}

/// Every signal's value at the frame of the latest time at or before `t` (verified when
/// strict). Frame times out of order are refused when strict, else searched frame by frame
/// and reported as a warning. The [`Integrity`] is that of the recording opened. (The
/// facade's `cat --at` finds it through its table of front-end hooks.)
pub fn find_state(
    path: &Path,
    t: f64,
    options: &ReadOptions,
) -> CoreResult<(Option<crate::State>, Integrity)> {
    let open = OpenOptions {
        verify: options.strict,
        ..Default::default()
    };
    let dir = IcarecDir::open(path, &open).map_err(recfmt_core::Error::other)?;
    let (state, out_of_order) = dir.state_at_checked(t).map_err(recfmt_core::Error::other)?;
    let mut integrity = dir.integrity().clone();
    if let Some(disorder) = out_of_order {
        let file = dir.file(crate::DYNAMIC_FILE);
        if options.strict {
            return Err(recfmt_core::Error::invalid(format!(
                "{}: frame times are not in order ({disorder}), so no frame can be found by time",
                file.display()
            )));
        }
        integrity.warn(format!(
            "{}: frame times are not in order ({disorder}): every frame time was read to find the latest at or before {t} s",
            file.display()
        ));
    }
    Ok((state, integrity))
}

/// Reads the schema `validate --against` checks with, refusing one that is itself invalid:
/// what a recording's `schema.json` must pass to open (parse, types, sizes, offsets, a valid
/// `time` object) and an RFC 3339 `created_at`. A checksum that does not match the schema is
/// an error when strict and a problem (INVALID) otherwise, as for a recording.
pub(crate) fn against(schema: &Path, options: &ReadOptions) -> CoreResult<Vec<String>> {
    current_schema(schema, options.strict).map(|(_, problems)| problems)
}

fn current_schema(schema: &Path, strict: bool) -> CoreResult<(Schema, Vec<String>)> {
    let invalid = || {
        format!(
            "{} is not a valid schema to check against",
            schema.display()
        )
    };
    let text = std::fs::read(schema)
        .map_err(|e| recfmt_core::Error::context(format!("reading {}", schema.display()), e))?;
    let (current, raw) = Schema::parse(&text, schema, &Default::default())
        .map_err(|e| recfmt_core::Error::context(invalid(), e))?;
    let doc = current.doc();
    if let Some(time) = &doc.time
        && let Err(what) = time.reference()
    {
        return Err(recfmt_core::Error::context(
            invalid(),
            recfmt_core::Error::invalid(format!(
                "{}: at byte {}: expected a valid time object: {what}",
                schema.display(),
                top_level_key_offset(&text, "time")
            )),
        ));
    }
    if TimeReference::parse(TimeSystem::Utc, Some(&doc.created_at)).is_err() {
        return Err(recfmt_core::Error::context(
            invalid(),
            recfmt_core::Error::invalid(format!(
                "{}: at byte {}: expected created_at to be an RFC 3339 time, found {:?}",
                schema.display(),
                top_level_key_offset(&text, "created_at"),
                doc.created_at
            )),
        ));
    }
    let mut problems = Vec::new();
    let computed = schema_checksum(&raw);
    if let Some(found) = &doc.checksum
        && *found != computed
    {
        let e = Error::Checksum {
            path: schema.to_path_buf(),
            offset: top_level_key_offset(&text, "checksum"),
            computed,
            found: found.clone(),
        };
        if strict {
            return Err(recfmt_core::Error::context(invalid(), e));
        }
        problems.push(format!("schema to check against: {e}"));
    }
    Ok((current, problems))
}

/// The checks after the scan: compatibility with `against` (its errors are problems), then
/// the checksums whatever strictness says: a `schema.json` checksum that does not match the
/// schema, and data files whose SHA-256 differs from what `metadata.json` records, are
/// problems. (Size mismatches show as a truncated or corrupt read already.)
pub(crate) fn check(
    path: &Path,
    against: Option<&Path>,
    options: &ReadOptions,
) -> CoreResult<Findings> {
    let mut findings = Findings::default();
    if let Some(schema) = against {
        let (current, _) = current_schema(schema, options.strict)?;
        let dir = IcarecDir::open(path, &Default::default()).map_err(recfmt_core::Error::other)?;
        let report = dir.validate_against(current.doc());
        findings
            .problems
            .extend(report.errors().map(ToString::to_string));
        findings.compatibility = Some(Compatibility {
            compatible: report.compatible,
            json: report.to_json(),
            text: report.to_string(),
        });
    }
    digests(path, &mut findings.problems, &mut findings.notes)?;
    Ok(findings)
}

fn digests(path: &Path, problems: &mut Vec<String>, notes: &mut Vec<String>) -> CoreResult<()> {
    let dir = IcarecDir::open(path, &Default::default()).map_err(recfmt_core::Error::other)?;
    let schema_path = dir.file(SCHEMA_FILE);
    let computed = schema_checksum(dir.raw_schema());
    match &dir.schema().doc().checksum {
        Some(found) if *found == computed => {}
        Some(found) => {
            let text = std::fs::read(&schema_path).map_err(|e| {
                recfmt_core::Error::context(format!("reading {}", schema_path.display()), e)
            })?;
            problems.push(
                Error::Checksum {
                    path: schema_path,
                    offset: top_level_key_offset(&text, "checksum"),
                    computed,
                    found: found.clone(),
                }
                .to_string(),
            );
        }
        None => notes.push(format!(
            "{}: no checksum, so the schema could not be verified",
            schema_path.display()
        )),
    }
    let Some(meta) = dir.metadata() else {
        notes.push(format!(
            "{}: no {}, so the data files could not be verified",
            dir.path().display(),
            METADATA_FILE
        ));
        return Ok(());
    };
    for (name, digest) in &meta.files {
        let file = dir.file(name);
        let Ok(len) = std::fs::metadata(&file).map(|m| m.len()) else {
            continue;
        };
        if len != digest.bytes {
            continue;
        }
        let found = file_sha256(&file)?;
        if !found.eq_ignore_ascii_case(&digest.sha256) {
            problems.push(
                Error::Digest {
                    path: file,
                    offset: 0,
                    expected: format!("sha256 {}", digest.sha256),
                    found: format!("sha256 {found}"),
                }
                .to_string(),
            );
        }
    }
    Ok(())
}

/// Lowercase hex SHA-256 of a file, read in blocks.
fn file_sha256(path: &Path) -> CoreResult<String> {
    use sha2::{Digest, Sha256};
    let mut file = std::fs::File::open(path)
        .map_err(|e| recfmt_core::Error::context(path.display().to_string(), e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| recfmt_core::Error::context(format!("reading {}", path.display()), e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The byte offset of the opening quote of member `key` of the top-level JSON object in
/// `text` (already parsed, so valid JSON), or 0 when it is not there.
fn top_level_key_offset(text: &[u8], key: &str) -> u64 {
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let name = text.get(start + 1..i).unwrap_or_default();
                let rest = text.get(i + 1..).unwrap_or_default();
                let is_key = rest
                    .iter()
                    .find(|b| !b.is_ascii_whitespace())
                    .is_some_and(|&b| b == b':');
                if depth == 1 && is_key && name == key.as_bytes() {
                    return start as u64;
                }
            }
            _ => {}
        }
        i += 1;
    }
    0
}
