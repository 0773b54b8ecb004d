//! Outputs written under a temporary name and moved into place when complete: the one place
//! every output of recfmt (files, folders, file sets) goes through.
//!
//! The rules, so that a failed, interrupted or concurrent run can neither leave an output that
//! looks whole nor destroy one that was there:
//!
//! * the temporary file or folder is `.<name>.<random>.partial` beside the target, created
//!   exclusively by the `tempfile` crate, so a planted file or symlink of that name is never
//!   written through and two runs never share one; a name too long for the file system with
//!   those 26 bytes added is shortened (a prefix of it and a hash of the whole);
//! * whether an existing target may be replaced travels with each call ([`Replace`], inside
//!   [`WriteOptions`](crate::WriteOptions)): only under [`Replace::RegularFile`] (the command
//!   line's `--force`), and never when it is not a regular file (a device node, a folder, a
//!   symlink). Every target is checked ([`check_target`]) before any input is read; under
//!   [`Replace::Never`] the move into place is itself exclusive, so a target appearing
//!   meanwhile is not lost;
//! * several files move into place as one ([`commit_all`], [`AtomicDir`] into an existing
//!   folder): if one fails, the ones already moved are taken back and replaced files restored;
//! * temporary files and the folders a run created are registered while they exist, so a
//!   signal handler can remove them ([`remove_pending`]) before the process exits.

mod folder;
mod lock;
mod writeback;

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tempfile::{Builder, NamedTempFile};

pub use folder::{AtomicDir, CreatedDirs, check_folder};
pub use lock::DirLock;
pub use writeback::Writeback;

pub use crate::write::Replace;

/// The end of every temporary name.
pub(crate) const TEMP_SUFFIX: &str = ".partial";
/// Random characters in a temporary name.
const RANDOM_CHARS: usize = 16;
/// The longest file name most file systems take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// What exists now and must go when the process is interrupted.
#[derive(Debug)]
enum Pending {
    /// A temporary file or folder (or a lock file): removed whole.
    Temporary(PathBuf),
    /// A folder this run created for its outputs: removed when empty.
    CreatedDir(PathBuf),
}

impl Pending {
    fn path(&self) -> &Path {
        match self {
            Pending::Temporary(p) | Pending::CreatedDir(p) => p,
        }
    }
}

/// What this process has made and not finished; `None` once [`remove_pending`] ran, so
/// nothing more is made.
static PENDING: Mutex<Option<Vec<Pending>>> = Mutex::new(Some(Vec::new()));

/// Makes something that must go if the process is interrupted and registers it, both under
/// the registry's lock: a signal handler's [`remove_pending`] then sees either nothing or
/// the registered thing, never a file or folder made but not yet registered (which would
/// outlive the interruption). After [`remove_pending`] nothing more is made: `Interrupted`.
fn create_pending<T>(
    create: impl FnOnce() -> io::Result<T>,
    pending: impl FnOnce(&T) -> Pending,
) -> io::Result<T> {
    let mut guard = PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(all) = guard.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "interrupted: no new output is started",
        ));
    };
    let made = create()?;
    all.push(pending(&made));
    Ok(made)
}

fn unregister(path: &Path) {
    if let Ok(mut guard) = PENDING.lock()
        && let Some(all) = guard.as_mut()
        && let Some(i) = all.iter().rposition(|p| p.path() == path)
    {
        all.remove(i);
    }
}

/// Removes every temporary output of this process that is not finished yet, then the
/// folders it created that are empty now. For a signal handler: after it, exit without
/// running the writers further. Outputs other threads start afterwards fail (`Interrupted`)
/// instead of being made.
pub fn remove_pending() {
    let all = PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .unwrap_or_default();
    for pending in &all {
        if let Pending::Temporary(path) = pending {
            remove_any(path);
        }
    }
    // Innermost folders were created last.
    for pending in all.iter().rev() {
        if let Pending::CreatedDir(path) = pending {
            let _ = std::fs::remove_dir(path);
        }
    }
}

/// True once [`remove_pending`] has started: the process is being interrupted. A main thread
/// that ends (with an error from an output removed under it, or even done) while a signal
/// handler is removing outputs asks this, and leaves the exit to the handler, so the
/// process ends with the interruption's status and only after the removal.
pub fn interrupted() -> bool {
    PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .is_none()
}

/// Lets outputs be made again after [`remove_pending`], for the tests that call it.
#[cfg(test)]
fn reopen_pending() {
    *PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Vec::new());
}

/// Removes a file or a folder with its content, whichever `path` is.
fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// The folder of `target` and the start of its temporary names (`.<name>.`), shortened so
/// the whole name stays within [`NAME_MAX`] bytes.
fn temp_prefix(target: &Path) -> io::Result<(PathBuf, String)> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let name = name.to_string_lossy();
    let room = NAME_MAX - 2 - RANDOM_CHARS - TEMP_SUFFIX.len();
    let stem = if name.len() <= room {
        name.into_owned()
    } else {
        // A prefix and a hash of the whole name: still recognisable, still distinct.
        let mut hasher = std::hash::DefaultHasher::new();
        name.hash(&mut hasher);
        let mut cut = room - 9;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}~{:08x}", &name[..cut], hasher.finish() as u32)
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, format!(".{stem}.")))
}

/// A `tempfile` builder for the temporary names of `prefix`, creating with `mode` (before the
/// umask, as for any new file).
fn builder(prefix: &str, #[allow(unused)] mode: u32) -> Builder<'_, 'static> {
    let mut b = Builder::new();
    b.prefix(prefix)
        .suffix(TEMP_SUFFIX)
        .rand_bytes(RANDOM_CHARS);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(mode));
    }
    b
}

/// Creates a new temporary file for `target`, registered for [`remove_pending`]; dropping it
/// removes it.
fn temp_file(target: &Path) -> io::Result<NamedTempFile> {
    let (dir, prefix) = temp_prefix(target)?;
    let file = create_pending(
        || builder(&prefix, 0o666).tempfile_in(&dir),
        |file| Pending::Temporary(file.path().to_path_buf()),
    )?;
    Ok(file)
}

/// Checks that an output may be written to `target` under `replace`: it does not exist, or
/// it is a regular file and replacing is allowed. Called before any work, so a refused
/// output costs nothing.
pub fn check_target(target: &Path, replace: Replace) -> io::Result<()> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if !m.file_type().is_file() => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a regular file; refusing to replace it",
                target.display()
            ),
        )),
        Ok(_) if replace == Replace::Never => Err(already_exists(target)),
        Ok(_) => Ok(()),
    }
}

fn already_exists(target: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} already exists; remove it or pass --force to replace it",
            target.display()
        ),
    )
}

fn appeared(target: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} appeared while this output was written; it is kept, and the new output discarded",
            target.display()
        ),
    )
}

/// Moves a finished temporary file to `target` under `replace` (exclusively when not
/// replacing). The temporary file is gone afterwards, moved or removed.
fn persist<F>(temp: NamedTempFile<F>, target: &Path, replace: Replace) -> io::Result<F> {
    let path = temp.path().to_path_buf();
    let checked = check_target(target, replace);
    let result = match checked {
        Err(e) => Err(e),
        Ok(()) if replace == Replace::Never => temp.persist_noclobber(target).map_err(|e| {
            if e.error.kind() == io::ErrorKind::AlreadyExists {
                appeared(target)
            } else {
                e.error
            }
        }),
        Ok(()) => temp.persist(target).map_err(|e| e.error),
    };
    unregister(&path);
    result
}

/// A file that only appears under its final name once [`AtomicFile::commit`] succeeds.
///
/// Until then it lives beside the target under a random temporary name (see the
/// [module](self)); if the writer fails or is dropped, the temporary file is removed, so a
/// failure never leaves a file that looks whole.
///
/// ```
/// use std::io::Write;
/// use recfmt_core::{AtomicFile, Replace};
/// let dir = std::env::temp_dir().join(format!("recfmt-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("out.csv");
/// let mut f = AtomicFile::create(&target, Replace::Never).unwrap();
/// f.write_all(b"a,b\n").unwrap();
/// assert!(!target.exists());
/// f.commit().unwrap();
/// assert!(target.exists());
/// // An existing output is not replaced unless asked.
/// assert!(AtomicFile::create(&target, Replace::Never).is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    writer: Option<BufWriter<NamedTempFile>>,
    /// Bytes written since the disk was last asked to start writing the file back.
    unsubmitted: writeback::Unsubmitted,
    /// Written, synced and waiting to be moved ([`commit_all`]).
    finished: Option<NamedTempFile>,
    temp: PathBuf,
    target: PathBuf,
    replace: Replace,
}

impl AtomicFile {
    /// Creates the temporary file for `target`; refuses at once when `target` exists and
    /// `replace` does not allow replacing it.
    pub fn create(target: impl AsRef<Path>, replace: Replace) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        check_target(&target, replace)?;
        let file = temp_file(&target)?;
        Ok(AtomicFile {
            temp: file.path().to_path_buf(),
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            unsubmitted: writeback::Unsubmitted::default(),
            finished: None,
            target,
            replace,
        })
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes and syncs the file, leaving it under its temporary name.
    fn finish_writing(&mut self) -> io::Result<()> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| io::Error::other("atomic file already finished"))?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.as_file().sync_all()?;
        self.finished = Some(file);
        Ok(())
    }

    /// Flushes, syncs and moves the file to its final name.
    pub fn commit(mut self) -> io::Result<()> {
        self.finish_writing()?;
        let file = self
            .finished
            .take()
            .ok_or_else(|| io::Error::other("atomic file already finished"))?;
        persist(file, &self.target, self.replace).map(drop)
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<NamedTempFile>> {
        self.writer
            .as_mut()
            .ok_or_else(|| io::Error::other("atomic file already finished"))
    }

    /// Counts `written` bytes; every 8 MiB asks the disk to start writing back what reached
    /// the file, so the sync before the move waits for the last part only.
    fn wrote(&mut self, written: usize) {
        if self.unsubmitted.due(written as u64)
            && let Some(writer) = &self.writer
        {
            writeback::start(writer.get_ref().as_file());
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer()?.write(buf)?;
        self.wrote(written);
        Ok(written)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)?;
        self.wrote(buf.len());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// Writers that go back to patch what they wrote (MCAP chunk headers, HDF5 superblocks, ZIP
/// headers) seek within the temporary file.
impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer()?.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed: the temporary file goes with its `NamedTempFile`.
        if self.writer.is_some() || self.finished.is_some() {
            unregister(&self.temp);
        }
    }
}

/// One file to move into place as part of a set.
struct Move {
    /// The finished file, under its temporary name.
    from: PathBuf,
    to: PathBuf,
    replace: Replace,
}

/// Moves every file of `moves` into place, as one: when a move fails, the files already moved
/// are taken back (a replaced file gets its old content back) and every temporary file left is
/// removed. Returns the index of the move that failed with its error.
fn move_all(moves: &[Move]) -> Result<(), (usize, io::Error)> {
    let mut moved: Vec<(&Path, Option<NamedTempFile<()>>)> = Vec::with_capacity(moves.len());
    let mut failure = None;
    for (i, m) in moves.iter().enumerate() {
        let result = backup_of(&m.to, m.replace).and_then(|backup| {
            move_one(&m.from, &m.to, m.replace)?;
            Ok(backup)
        });
        match result {
            Ok(backup) => moved.push((&m.to, backup)),
            Err(e) => {
                failure = Some((i, e));
                break;
            }
        }
    }
    let Some(failed) = failure else {
        // The backups go with their `NamedTempFile`s.
        for (_, backup) in &moved {
            if let Some(b) = backup {
                unregister(b.path());
            }
        }
        return Ok(());
    };
    for (target, backup) in moved.into_iter().rev() {
        match backup {
            Some(b) => {
                let path = b.path().to_path_buf();
                let _ = b.persist(target);
                unregister(&path);
            }
            None => {
                let _ = std::fs::remove_file(target);
            }
        }
    }
    for m in &moves[failed.0..] {
        let _ = std::fs::remove_file(&m.from);
        unregister(&m.from);
    }
    Err(failed)
}

/// A hard link to the regular file `target` that `replace` allows replacing, so that it can
/// be restored; `None` when there is nothing to keep.
fn backup_of(target: &Path, replace: Replace) -> io::Result<Option<NamedTempFile<()>>> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_file() && replace == Replace::RegularFile => {
            let (dir, prefix) = temp_prefix(target)?;
            let backup = create_pending(
                || builder(&prefix, 0o666).make_in(&dir, |p| std::fs::hard_link(target, p)),
                |backup| Pending::Temporary(backup.path().to_path_buf()),
            )?;
            Ok(Some(backup))
        }
        _ => Ok(None),
    }
}

/// Moves the finished temporary file `from` to `to` (exclusively when not replacing).
fn move_one(from: &Path, to: &Path, replace: Replace) -> io::Result<()> {
    check_target(to, replace)?;
    if replace == Replace::Never {
        match std::fs::hard_link(from, to) {
            Ok(()) => {
                std::fs::remove_file(from)?;
                unregister(from);
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(appeared(to)),
            // A file system without hard links: the check above has to do.
            Err(_) => {}
        }
    }
    std::fs::rename(from, to)?;
    unregister(from);
    Ok(())
}

/// Moves several finished files into place as one output: when any move fails, the files
/// already moved are taken back (a replaced file gets its old content back) and every
/// temporary file is removed, so the folder is as it was. Returns the index of the file that
/// failed with its error.
pub fn commit_all(files: Vec<AtomicFile>) -> Result<(), (usize, io::Error)> {
    let mut files = files;
    for (i, f) in files.iter_mut().enumerate() {
        f.finish_writing().map_err(|e| (i, e))?;
    }
    let mut moves = Vec::with_capacity(files.len());
    for (i, f) in files.iter_mut().enumerate() {
        let file = f
            .finished
            .take()
            .ok_or_else(|| (i, io::Error::other("atomic file already finished")))?;
        // From here on `move_all` owns the temporary file (still registered).
        let (_, path) = file.keep().map_err(|e| (i, e.error))?;
        moves.push(Move {
            from: path,
            to: f.target.clone(),
            replace: f.replace,
        });
    }
    move_all(&moves)
}

/// A temporary path reserved beside a target for writers that open the file themselves (an
/// HDF5 library writing by path): created empty and exclusively, removed on drop unless
/// [`TempPath::persist`] moved it into place.
#[derive(Debug)]
pub struct TempPath {
    file: Option<NamedTempFile>,
    path: PathBuf,
    target: PathBuf,
    replace: Replace,
}

impl TempPath {
    /// Reserves a temporary file for `target`, refusing at once when `target` exists and
    /// `replace` does not allow replacing it.
    pub fn reserve(target: &Path, replace: Replace) -> io::Result<Self> {
        check_target(target, replace)?;
        let file = temp_file(target)?;
        Ok(TempPath {
            path: file.path().to_path_buf(),
            file: Some(file),
            target: target.to_path_buf(),
            replace,
        })
    }

    /// The temporary path to write.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the finished file to its target (the writer must have closed it). After an
    /// error the temporary file is removed.
    pub fn persist(&mut self) -> io::Result<()> {
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("temporary file already moved into place"))?;
        // The writer wrote by path: sync what it wrote before the name changes.
        File::open(&self.path)?.sync_all()?;
        persist(file, &self.target, self.replace).map(drop)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.file.is_some() {
            unregister(&self.path);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// [`remove_pending`] acts on the whole process: these tests take turns.
    pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = tempfile::Builder::new()
            .prefix(&format!("recfmt-atomic-{name}-"))
            .tempdir()
            .expect("scratch folder");
        dir.keep()
    }

    pub(crate) fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn atomic(target: &Path, replace: Replace, text: &str) -> AtomicFile {
        let mut f = AtomicFile::create(target, replace).expect("create");
        f.write_all(text.as_bytes()).expect("write");
        f
    }

    #[test]
    fn temporary_names_are_unique_hidden_and_fit_the_file_system() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("names");
        let a = atomic(&dir.join("out.csv"), Replace::Never, "a");
        let b = atomic(&dir.join("out.csv"), Replace::Never, "b");
        assert_ne!(a.temp, b.temp);
        let name = a.temp.file_name().and_then(|n| n.to_str()).expect("name");
        assert!(
            name.starts_with(".out.csv.") && name.ends_with(".partial"),
            "{name}"
        );
        assert_eq!(name.len(), "out.csv".len() + 26);
        drop((a, b));
        // Names of 222 to 255 bytes: the temporary name is shortened, the output keeps its
        // name (multi-byte characters are not cut).
        for len in [229, 230, 240, 255] {
            let long = format!("{}.csv", "é".repeat((len - 4) / 2)) + &"x".repeat(len % 2);
            assert_eq!(long.len(), len);
            let target = dir.join(&long);
            let f = atomic(&target, Replace::Never, "long");
            let temp = f.temp.file_name().expect("name").len();
            assert!(temp <= NAME_MAX, "{temp}");
            f.commit().expect("commit");
            assert_eq!(std::fs::read_to_string(&target).expect("read"), "long");
        }
        assert_eq!(names(&dir).len(), 4, "{:?}", names(&dir));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_large_output_written_back_while_written_keeps_every_byte() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("writeback");
        let target = dir.join("big.bin");
        // 20 MiB in uneven pieces through both write paths, then a patch at the start, as
        // writers that go back to fill in a header do.
        let expected: Vec<u8> = (0..20u32 << 20).map(|i| (i % 251) as u8).collect();
        let mut f = AtomicFile::create(&target, Replace::Never).expect("create");
        let mut at = 0;
        for (i, piece) in expected.chunks(700_001).enumerate() {
            if i % 2 == 0 {
                f.write_all(piece).expect("write_all");
            } else {
                let mut rest = piece;
                while !rest.is_empty() {
                    let n = f.write(rest).expect("write");
                    rest = &rest[n..];
                }
            }
            at += piece.len();
        }
        assert_eq!(at, expected.len());
        // Write-backs were asked for on the way (past 8 and 16 MiB): what waits for the sync is
        // what came after the last request, not all 20 MiB.
        assert!(
            f.unsubmitted.0 > 0 && f.unsubmitted.0 < 8 << 20,
            "{}",
            f.unsubmitted.0
        );
        f.seek(SeekFrom::Start(0)).expect("seek");
        f.write_all(&[0xAB; 4]).expect("patch");
        f.commit().expect("commit");
        let mut patched = expected;
        patched[..4].copy_from_slice(&[0xAB; 4]);
        assert!(std::fs::read(&target).expect("read") == patched);
        assert_eq!(names(&dir), ["big.bin"]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_existing_output_is_kept_unless_replacing_is_allowed() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("replace");
        let target = dir.join("t.csv");
        std::fs::write(&target, "old").expect("write");
        assert_eq!(
            AtomicFile::create(&target, Replace::Never)
                .expect_err("refused")
                .kind(),
            io::ErrorKind::AlreadyExists
        );
        atomic(&target, Replace::RegularFile, "new")
            .commit()
            .expect("commit");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "new");
        // A folder (like a device node) is never replaced, even when replacing is allowed.
        let folder = dir.join("d");
        std::fs::create_dir(&folder).expect("mkdir");
        assert!(AtomicFile::create(&folder, Replace::RegularFile).is_err());
        assert_eq!(names(&dir), ["d", "t.csv"]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_target_appearing_during_the_write_is_not_replaced() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("race");
        let target = dir.join("t.csv");
        let f = atomic(&target, Replace::Never, "new");
        std::fs::write(&target, "someone else's").expect("write");
        assert!(f.commit().is_err());
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            "someone else's"
        );
        assert_eq!(names(&dir), ["t.csv"], "the temporary file is gone too");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_failed_commit_of_several_files_restores_the_folder() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("all");
        let (a, b, c) = (dir.join("a.csv"), dir.join("b.csv"), dir.join("c.csv"));
        std::fs::write(&a, "old a").expect("write");
        let files = vec![
            atomic(&a, Replace::RegularFile, "new a"),
            atomic(&b, Replace::RegularFile, "new b"),
            atomic(&c, Replace::RegularFile, "new c"),
        ];
        // c becomes a folder meanwhile: its move fails after a and b were moved.
        std::fs::create_dir(&c).expect("mkdir");
        let (failed, _) = commit_all(files).expect_err("c cannot be replaced");
        assert_eq!(failed, 2);
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "old a");
        assert!(!b.exists());
        assert_eq!(names(&dir), ["a.csv", "c.csv"]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn pending_outputs_are_removed_on_request() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("pending");
        let f = atomic(&dir.join("t.csv"), Replace::Never, "partial");
        let session =
            AtomicDir::create(&dir.join("session"), Replace::Never, &[]).expect("temp dir");
        let created = CreatedDirs::create(&dir.join("out/stream")).expect("mkdir");
        assert_eq!(names(&dir).len(), 3);
        assert!(!interrupted());
        remove_pending();
        assert!(interrupted());
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
        // Another thread's output started after the handler ran is refused, not made.
        let late = CreatedDirs::create(&dir.join("late")).expect_err("interrupted");
        assert_eq!(late.kind(), io::ErrorKind::Interrupted);
        assert!(AtomicDir::create(&dir.join("late2"), Replace::Never, &[]).is_err());
        reopen_pending();
        assert!(!interrupted());
        drop((f, session, created));
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_reserved_path_is_moved_or_removed() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("reserved");
        let target = dir.join("x.h5");
        let mut kept = TempPath::reserve(&target, Replace::Never).expect("reserve");
        std::fs::write(kept.path(), "h5").expect("write");
        kept.persist().expect("persist");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "h5");
        assert!(TempPath::reserve(&target, Replace::Never).is_err());
        let dropped = TempPath::reserve(&target, Replace::RegularFile).expect("reserve");
        std::fs::write(dropped.path(), "half").expect("write");
        drop(dropped);
        assert_eq!(names(&dir), ["x.h5"]);
        std::fs::remove_dir_all(dir).ok();
    }
}
