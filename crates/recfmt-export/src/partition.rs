//! Hive-partitioned Parquet datasets: a fleet of recordings read as one table per stream.
//!
//! [`export_partitioned`] writes each stream of one recording to
//! `<root>/<stream>/source=<recording>/part-0.parquet`, with a `source` column holding the
//! recording's name in every row. DuckDB (`hive_partitioning`), Spark, Trino and
//! `pyarrow.dataset` read `<root>/<stream>` as one table over every recording exported there.
//! Adding a recording adds its own folders and touches no other file; exporting a recording
//! again replaces only its own parts (when replacing is allowed: the command line's `--force`,
//! [`ExportOptions::replace`]).
//!
//! One run at a time writes a recording into a dataset (a lock file per recording in the
//! dataset's folder); a run that holds it first removes what a killed run of the same
//! recording left (`.part-0.parquet.<random>.partial`), so the dataset stays readable, and
//! a failed or interrupted run removes the folders it created.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::{DataType, Field};
use recfmt_core::{BatchSet, CreatedDirs, DirLock, RecordingReader};

use crate::{
    Error, ExportOptions, ExportReport, TableFormat, commit_all, mapping, read_all_batches,
    unique_stems, writers,
};

/// The name of the column (and of the partition key) that holds the recording's name.
pub const SOURCE_COLUMN: &str = "source";

/// The name a recording at `path` gets in a dataset: its file or folder name without the last
/// extension (`runs/day1.log` is `day1`, `fleet/boat7/` is `boat7`).
///
/// ```
/// use std::path::Path;
/// assert_eq!(recfmt_export::source_name(Path::new("runs/day1.log")), "day1");
/// assert_eq!(recfmt_export::source_name(Path::new("fleet/boat7/")), "boat7");
/// ```
pub fn source_name(path: &Path) -> String {
    let name = path
        .file_stem()
        .or_else(|| path.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.is_empty() {
        "recording".into()
    } else {
        name
    }
}

/// The folder of one recording's part files for the stream stored under `stream_dir`:
/// `root/stream_dir/source=<source>`, with the characters that a path or a Hive key cannot
/// hold (`/`, `\`, `=`, `%`, `#`, `:` and the like, control characters) written as `%XX`, as
/// Hive and `pyarrow.dataset` (URI segment encoding) read them.
///
/// ```
/// use std::path::Path;
/// let dir = recfmt_export::partition_dir(Path::new("out"), "NAV", "a/b=c");
/// assert_eq!(dir, Path::new("out/NAV/source=a%2Fb%3Dc"));
/// ```
pub fn partition_dir(root: &Path, stream_dir: &str, source: &str) -> PathBuf {
    root.join(stream_dir)
        .join(format!("{SOURCE_COLUMN}={}", escape_source(source)))
}

/// Hive's name for a missing partition value: a folder `source=__HIVE_DEFAULT_PARTITION__`
/// reads back as a null source.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// `source` as a partition value (see [`partition_dir`]).
fn escape_source(source: &str) -> String {
    let mut escaped = String::with_capacity(source.len());
    for c in source.chars() {
        if c.is_control() || "\"#%'*/:=?\\{}[]^<>|".contains(c) {
            let mut utf8 = [0u8; 4];
            for byte in c.encode_utf8(&mut utf8).bytes() {
                escaped.push_str(&format!("%{byte:02X}"));
            }
        } else {
            escaped.push(c);
        }
    }
    if escaped.is_empty() || escaped == "." || escaped == ".." {
        escaped = escaped.replace('.', "%2E");
    }
    escaped
}

/// The lock file of one recording in a dataset: `.recfmt.source=<name>.lock` in the root
/// (a hash stands for a name too long for a file name).
fn lock_name(source: &str) -> String {
    let escaped = escape_source(source);
    if escaped.len() <= 200 {
        return format!(".recfmt.{SOURCE_COLUMN}={escaped}.lock");
    }
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    source.hash(&mut hasher);
    format!(".recfmt.{SOURCE_COLUMN}#{:016x}.lock", hasher.finish())
}

/// True for the part files this module writes (`part-<n>.parquet`).
fn is_part_file(name: &str) -> bool {
    name.strip_prefix("part-")
        .and_then(|rest| rest.strip_suffix(".parquet"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The partition folders [`export_partitioned`] writes `schema`'s streams of recording
/// `source` into, refused before anything is read or created when the recording is already
/// in the dataset and [`ExportOptions::replace`] does not allow replacing it, or when its
/// name is Hive's null.
pub fn check_partitioned(
    schema: &recfmt_core::Schema,
    root: &Path,
    source: &str,
    options: &ExportOptions,
) -> Result<Vec<PathBuf>, Error> {
    if escape_source(source) == HIVE_NULL {
        return Err(Error::Invalid(format!(
            "a recording named {HIVE_NULL} would read back as a null source (Hive's name for a missing value); give it another name (--source NAME)"
        )));
    }
    let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
    let dirs: Vec<PathBuf> = unique_stems(&names)
        .iter()
        .map(|stem| partition_dir(root, stem, source))
        .collect();
    for dir in &dirs {
        let path = dir.join("part-0.parquet");
        recfmt_core::atomic::check_target(&path, options.replace)
            .map_err(|e| Error::io(&path, e))?;
    }
    Ok(dirs)
}

/// Reads `reader` to the end and writes each stream with rows into the Hive-partitioned
/// Parquet dataset under `root`: `root/<stream>/source=<source>/part-0.parquet` (stream
/// folders named as [`export_tables`](crate::export_tables) names files), each row with a
/// `source` column (text) holding `source`. Options are those of `export_tables`; the format
/// must be Parquet.
///
/// The parts appear only once every table is complete; then part files left in this
/// recording's folders by an earlier export are removed, so exporting a recording again
/// replaces it. That is refused before anything is read unless replacing existing files is
/// allowed ([`ExportOptions::replace`]), and while another run writes the same recording
/// into `root` (a lock file per recording). Temporary files a killed run of this recording
/// left are removed first; folders this run created are removed again when it fails or is
/// interrupted. Other recordings' folders are never touched. A recording named
/// `__HIVE_DEFAULT_PARTITION__` (Hive's null) is refused.
pub fn export_partitioned(
    reader: &mut dyn RecordingReader,
    root: &Path,
    source: &str,
    options: &ExportOptions,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<ExportReport, Error> {
    if options.format != TableFormat::Parquet {
        return Err(Error::Invalid(format!(
            "a partitioned dataset is written as Parquet, not {}",
            options.format.extension()
        )));
    }
    crate::check_options(options)?;
    let header = reader.header().clone();
    let schema = reader.schema().clone();
    let dirs = check_partitioned(&schema, root, source, options)?;
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let lock = DirLock::acquire_named(root, &lock_name(source)).map_err(|e| Error::io(root, e))?;
    for dir in &dirs {
        lock.remove_leftovers(dir).map_err(|e| Error::io(dir, e))?;
    }
    // Again under the lock: another run may have added this recording meanwhile.
    check_partitioned(&schema, root, source, options)?;
    let mut plans = Vec::with_capacity(dirs.len());
    let mut created = Vec::with_capacity(dirs.len());
    for (dir, desc) in dirs.iter().zip(&schema.streams) {
        created.push(CreatedDirs::create(dir).map_err(|e| Error::io(dir, e))?);
        // A signal named `source` is written as `source_2` (see `column_names`).
        let table = mapping::arrow_schema_with_reserving(
            &header,
            desc,
            &options.metadata,
            &[SOURCE_COLUMN],
        );
        let mut fields: Vec<Arc<Field>> = table.fields().iter().cloned().collect();
        fields.push(Arc::new(Field::new(SOURCE_COLUMN, DataType::Utf8, false)));
        let table = arrow_schema::Schema::new(fields).with_metadata(table.metadata().clone());
        plans.push(writers::TablePlan {
            schema: Arc::new(table),
            desc: desc.clone(),
            path: dir.join("part-0.parquet"),
            constant: Some(source.to_owned()),
        });
    }

    let mut writers = writers::Writers::start(plans, options)?;
    let batches = BatchSet::new(&schema, options.batch_rows);
    read_all_batches(reader, batches, progress, &mut |batch| {
        writers.send(batch).map(|()| true)
    })?;
    let outputs = commit_all(writers.finish()?)?;
    created.into_iter().for_each(CreatedDirs::keep);

    // Earlier parts of this recording that this export did not write again.
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let stale =
                is_part_file(&name.to_string_lossy()) && !outputs.iter().any(|o| o.path == path);
            if stale {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
        // A stream without rows leaves no folder behind (ignored when something else is there).
        let _ = std::fs::remove_dir(dir);
        if let Some(stream_dir) = dir.parent() {
            let _ = std::fs::remove_dir(stream_dir);
        }
    }
    drop(lock);
    let (done, total) = reader.progress();
    progress(done, total);
    Ok(ExportReport { outputs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_files_are_recognised() {
        assert!(is_part_file("part-0.parquet"));
        assert!(is_part_file("part-12.parquet"));
        assert!(!is_part_file("part-.parquet"));
        assert!(!is_part_file("part-0.parquet.partial"));
        assert!(!is_part_file("notes.parquet"));
    }

    #[test]
    fn awkward_names_are_escaped() {
        let root = Path::new("r");
        assert_eq!(
            partition_dir(root, "s", ".."),
            Path::new("r/s/source=%2E%2E")
        );
        assert_eq!(
            partition_dir(root, "s", "50%"),
            Path::new("r/s/source=50%25")
        );
        assert_eq!(
            partition_dir(root, "s", "boat 7"),
            Path::new("r/s/source=boat 7")
        );
    }
}
