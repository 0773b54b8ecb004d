//! Output files written under a temporary name and moved into place when complete.
//!
//! Every output of recfmt follows the same rules, so a failed, interrupted or concurrent run
//! can neither leave a file that looks whole nor destroy one that was there:
//!
//! * the temporary file is `.<name>.<random>.partial` beside the target, created exclusively
//!   (`O_CREAT | O_EXCL`), so a planted file or symlink of that name is never written through
//!   and two runs never share one;
//! * an existing target is replaced only under [`Replace::RegularFile`] (the command line's
//!   `--force`), and never when it is not a regular file (a device node, a folder, a symlink);
//!   under [`Replace::Never`], the default, the move into place is itself exclusive (a hard
//!   link, then the temporary name is removed), so a target appearing meanwhile is not lost;
//! * [`commit_all`] moves several files into place as one: if one fails, the ones already
//!   moved are taken back and replaced files restored;
//! * temporary files are registered while they exist, so a signal handler can remove them
//!   ([`remove_pending`]) before the process exits.

use std::collections::hash_map::RandomState;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether an output may replace a file that already has its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Replace {
    /// Refuse: the target must not exist (the default, for the command line without `--force`).
    #[default]
    Never,
    /// Replace an existing regular file; still refuse anything else.
    RegularFile,
}

static REPLACE_EXISTING: AtomicBool = AtomicBool::new(false);

/// Sets the policy [`AtomicFile::create`] and the format writers use in this process: the
/// command line's `--force`. Library callers that want it per file use
/// [`AtomicFile::create_with`].
pub fn set_default_replace(replace: Replace) {
    REPLACE_EXISTING.store(replace == Replace::RegularFile, Ordering::Relaxed);
}

/// The policy set by [`set_default_replace`] ([`Replace::Never`] unless set).
pub fn default_replace() -> Replace {
    if REPLACE_EXISTING.load(Ordering::Relaxed) {
        Replace::RegularFile
    } else {
        Replace::Never
    }
}

/// Temporary paths that exist now, for [`remove_pending`].
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn register(path: &Path) {
    if let Ok(mut pending) = PENDING.lock() {
        pending.push(path.to_path_buf());
    }
}

fn unregister(path: &Path) {
    if let Ok(mut pending) = PENDING.lock()
        && let Some(i) = pending.iter().rposition(|p| p == path)
    {
        pending.swap_remove(i);
    }
}

/// Removes every temporary output of this process that is not finished yet (files and
/// folders). For a signal handler: after it, exit without running the writers further.
pub fn remove_pending() {
    let paths = match PENDING.lock() {
        Ok(mut pending) => std::mem::take(&mut *pending),
        Err(_) => return,
    };
    for path in paths {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(_) => {}
        }
    }
}

/// A fresh unpredictable suffix: the standard library's per-process random hash keys, mixed
/// with a counter and the clock.
fn random_suffix() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(t.as_nanos());
    }
    hasher.finish()
}

/// A new temporary path beside `target`: `.<name>.<16 hex digits>.partial`. Nothing is
/// created; see [`create_temp_file`] and [`create_temp_dir`].
pub fn temp_path(target: &Path) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{:016x}.partial", random_suffix()));
    Ok(target.with_file_name(temp_name))
}

/// Tries new temporary names until one can be created exclusively.
fn create_temp<T>(
    target: &Path,
    mut create: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(PathBuf, T)> {
    let mut last = None;
    for _ in 0..16 {
        let path = temp_path(target)?;
        match create(&path) {
            Ok(made) => {
                register(&path);
                return Ok((path, made));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// Creates a new temporary file for `target`, exclusively (never through an existing file or
/// link), registered for [`remove_pending`]. Remove it with [`discard`] or move it with
/// [`move_into_place`].
pub fn create_temp_file(target: &Path) -> io::Result<(PathBuf, File)> {
    create_temp(target, |p| {
        OpenOptions::new().write(true).create_new(true).open(p)
    })
}

/// Creates a new temporary folder for `target`, exclusively, registered for
/// [`remove_pending`].
pub fn create_temp_dir(target: &Path) -> io::Result<PathBuf> {
    create_temp(target, |p| std::fs::create_dir(p)).map(|(p, ())| p)
}

/// Removes an unfinished temporary file or folder.
pub fn discard(temp: &Path) {
    unregister(temp);
    match std::fs::symlink_metadata(temp) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(temp);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(temp);
        }
        Err(_) => {}
    }
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
        Ok(_) if replace == Replace::Never => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} already exists; remove it or pass --force to replace it",
                target.display()
            ),
        )),
        Ok(_) => Ok(()),
    }
}

/// Moves a finished temporary file (or folder) to `target` under `replace`. Without
/// replacing, the move is exclusive: a target that appeared meanwhile is kept and this fails.
pub fn move_into_place(temp: &Path, target: &Path, replace: Replace) -> io::Result<()> {
    check_target(target, replace)?;
    let is_dir = std::fs::symlink_metadata(temp)?.is_dir();
    if replace == Replace::Never && !is_dir {
        match std::fs::hard_link(temp, target) {
            Ok(()) => {
                unregister(temp);
                return std::fs::remove_file(temp);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} appeared while this output was written; it is kept, and the new output discarded",
                        target.display()
                    ),
                ));
            }
            // A file system without hard links: the check above has to do.
            Err(_) => {}
        }
    }
    std::fs::rename(temp, target)?;
    unregister(temp);
    Ok(())
}

/// A file that only appears under its final name once [`AtomicFile::commit`] succeeds.
///
/// Until then it lives beside the target under a random temporary name (see the
/// [module](self)); if the writer fails or is dropped, the temporary file is removed, so a
/// failure never leaves a file that looks whole.
///
/// ```
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("recfmt-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("out.csv");
/// let mut f = recfmt_core::AtomicFile::create(&target).unwrap();
/// f.write_all(b"a,b\n").unwrap();
/// assert!(!target.exists());
/// f.commit().unwrap();
/// assert!(target.exists());
/// // An existing output is not replaced unless asked.
/// assert!(recfmt_core::AtomicFile::create(&target).is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    writer: Option<BufWriter<File>>,
    temp: PathBuf,
    target: PathBuf,
    replace: Replace,
}

impl AtomicFile {
    /// Creates the temporary file for `target`, under the process's [`default_replace`].
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        Self::create_with(target, default_replace())
    }

    /// Creates the temporary file for `target`; refuses at once when `target` exists and
    /// `replace` does not allow replacing it.
    pub fn create_with(target: impl AsRef<Path>, replace: Replace) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        check_target(&target, replace)?;
        let (temp, file) = create_temp_file(&target)?;
        Ok(AtomicFile {
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            temp,
            target,
            replace,
        })
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes and syncs the file, leaving it under its temporary name (for [`commit_all`]).
    fn finish_writing(&mut self) -> io::Result<()> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| io::Error::other("atomic file already finished"))?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    }

    /// Flushes, syncs and moves the file to its final name.
    pub fn commit(mut self) -> io::Result<()> {
        self.finish_writing()?;
        let result = move_into_place(&self.temp, &self.target, self.replace);
        if result.is_err() {
            discard(&self.temp);
        }
        result
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.writer
            .as_mut()
            .ok_or_else(|| io::Error::other("atomic file already finished"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// Writers that go back to patch what they wrote (MCAP chunk headers, HDF5 superblocks) seek
/// within the temporary file.
impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer()?.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed (or the commit failed): the output must not stay behind. After a
        // successful commit the temporary name no longer exists.
        if self.writer.take().is_some() || std::fs::symlink_metadata(&self.temp).is_ok() {
            discard(&self.temp);
        }
    }
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
    // Keep what each replaced target held, to restore it on failure.
    let mut moved: Vec<(PathBuf, Option<PathBuf>)> = Vec::with_capacity(files.len());
    let mut failure = None;
    for (i, f) in files.iter().enumerate() {
        let backup = match std::fs::symlink_metadata(&f.target) {
            Ok(m) if m.file_type().is_file() && f.replace == Replace::RegularFile => {
                // A backup that cannot be made stops the commit; the files moved so far are
                // put back below like after any other failure.
                let made = temp_path(&f.target)
                    .and_then(|backup| std::fs::hard_link(&f.target, &backup).map(|()| backup));
                let backup = match made {
                    Ok(backup) => backup,
                    Err(e) => {
                        failure = Some((i, e));
                        break;
                    }
                };
                register(&backup);
                Some(backup)
            }
            _ => None,
        };
        match move_into_place(&f.temp, &f.target, f.replace) {
            Ok(()) => moved.push((f.target.clone(), backup)),
            Err(e) => {
                if let Some(b) = backup {
                    discard(&b);
                }
                failure = Some((i, e));
                break;
            }
        }
    }
    match failure {
        None => {
            for (_, backup) in moved {
                if let Some(b) = backup {
                    discard(&b);
                }
            }
            Ok(())
        }
        Some(failed) => {
            for (target, backup) in moved.into_iter().rev() {
                match backup {
                    Some(b) => {
                        let _ = std::fs::rename(&b, &target);
                        unregister(&b);
                    }
                    None => {
                        let _ = std::fs::remove_file(&target);
                    }
                }
            }
            // Dropping `files` removes the temporary files not yet moved.
            Err(failed)
        }
    }
}

/// A lock on an output folder: `.recfmt.lock` holding the process id (and, on Linux, the
/// process's start time), created exclusively. A second run writing into the same folder is
/// refused while the first holds it; a lock left by a process that no longer runs (after a
/// crash) is taken over, also when its process id has since been given to another process.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
}

impl DirLock {
    /// The lock file's name inside the folder.
    pub const FILE_NAME: &'static str = ".recfmt.lock";

    /// Takes the lock on `dir` (which must exist).
    pub fn acquire(dir: &Path) -> io::Result<Self> {
        let path = dir.join(Self::FILE_NAME);
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let pid = std::process::id();
                    match process_start_time(pid) {
                        Some(started) => writeln!(f, "{pid} {started}")?,
                        None => writeln!(f, "{pid}")?,
                    }
                    register(&path);
                    return Ok(DirLock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    let mut fields = holder.split_whitespace();
                    let pid: Option<u32> = fields.next().and_then(|p| p.parse().ok());
                    let started: Option<u64> = fields.next().and_then(|s| s.parse().ok());
                    let alive = pid.is_none_or(|pid| holder_alive(pid, started));
                    if alive {
                        return Err(io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            format!(
                                "{} is being written by another run (process {}, lock file {}); wait for it, or remove the lock file if no run is active",
                                dir.display(),
                                pid.map_or_else(|| "unknown".into(), |p| p.to_string()),
                                path.display()
                            ),
                        ));
                    }
                    // The holder is gone: a stale lock.
                    std::fs::remove_file(&path)?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("could not take the lock {}", path.display()),
        ))
    }
}

/// When process `pid` started (clock ticks after boot, field 22 of `/proc/PID/stat`), where
/// the system says; with the pid it names one process, even after the pid is reused.
fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// True when the process that wrote a lock may still run: where `/proc` cannot tell, always.
fn holder_alive(pid: u32, started: Option<u64>) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return false;
    }
    match (started, process_start_time(pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        unregister(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A temporary path reserved beside a target for writers that open the file themselves (an
/// HDF5 library writing by path): created empty and exclusively, removed on drop unless
/// [`TempPath::persist`] moved it into place.
#[derive(Debug)]
pub struct TempPath {
    path: PathBuf,
    target: PathBuf,
    done: bool,
}

impl TempPath {
    /// Reserves a temporary file for `target`, refusing at once (under the process's
    /// [`default_replace`]) when `target` may not be replaced.
    pub fn reserve(target: &Path) -> io::Result<Self> {
        check_target(target, default_replace())?;
        let (path, file) = create_temp_file(target)?;
        drop(file);
        Ok(TempPath {
            path,
            target: target.to_path_buf(),
            done: false,
        })
    }

    /// The temporary path to write.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the finished file to its target (the writer must have closed it). After an
    /// error the temporary file is still removed on drop.
    pub fn persist(&mut self) -> io::Result<()> {
        if self.done {
            return Err(io::Error::other("temporary file already moved into place"));
        }
        move_into_place(&self.path, &self.target, default_replace())?;
        self.done = true;
        Ok(())
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if !self.done {
            discard(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`remove_pending`] acts on the whole process: these tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "recfmt-atomic-{name}-{}-{:x}",
            std::process::id(),
            random_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn atomic(target: &Path, replace: Replace, text: &str) -> AtomicFile {
        let mut f = AtomicFile::create_with(target, replace).expect("create");
        f.write_all(text.as_bytes()).expect("write");
        f
    }

    #[test]
    fn temporary_names_are_unique_and_hidden() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("names");
        let a = temp_path(&dir.join("out.csv")).expect("temp");
        let b = temp_path(&dir.join("out.csv")).expect("temp");
        assert_ne!(a, b);
        let name = a.file_name().and_then(|n| n.to_str()).expect("name");
        assert!(
            name.starts_with(".out.csv.") && name.ends_with(".partial"),
            "{name}"
        );
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_existing_output_is_kept_unless_replacing_is_allowed() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("replace");
        let target = dir.join("t.csv");
        std::fs::write(&target, "old").expect("write");
        assert_eq!(
            AtomicFile::create_with(&target, Replace::Never)
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
        assert!(AtomicFile::create_with(&folder, Replace::RegularFile).is_err());
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
        let temp = create_temp_dir(&dir.join("session")).expect("temp dir");
        assert_eq!(names(&dir).len(), 2);
        remove_pending();
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
        drop(f);
        assert!(!temp.exists());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_folder_lock_refuses_a_second_run_and_takes_over_a_stale_one() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("lock");
        let lock = DirLock::acquire(&dir).expect("first");
        let err = DirLock::acquire(&dir).expect_err("second");
        assert!(err.to_string().contains("another run"), "{err}");
        drop(lock);
        assert!(names(&dir).is_empty());
        // A lock left by a process that no longer exists (pids stay below 2^22 on Linux).
        std::fs::write(dir.join(DirLock::FILE_NAME), "4294967\n").expect("write");
        if Path::new("/proc/self").exists() {
            let lock = DirLock::acquire(&dir).expect("stale lock taken over");
            drop(lock);
            // A lock whose pid is alive but now belongs to another process (pid 1 started at
            // boot, not at this recorded time) is stale too.
            let init_started = process_start_time(1).expect("/proc/1/stat");
            let reused = format!("1 {}\n", init_started + 12_345);
            std::fs::write(dir.join(DirLock::FILE_NAME), reused).expect("write");
            let lock = DirLock::acquire(&dir).expect("lock of a reused pid taken over");
            // A live holder with the right start time is respected.
            let held = std::fs::read_to_string(dir.join(DirLock::FILE_NAME)).expect("read");
            assert_eq!(
                held.split_whitespace().nth(1).and_then(|t| t.parse().ok()),
                process_start_time(std::process::id())
            );
            drop(lock);
            let alive = format!("1 {init_started}\n");
            std::fs::write(dir.join(DirLock::FILE_NAME), alive).expect("write");
            let err = DirLock::acquire(&dir).expect_err("pid 1 runs");
            assert!(err.to_string().contains("process 1"), "{err}");
            std::fs::remove_file(dir.join(DirLock::FILE_NAME)).ok();
        }
        std::fs::remove_dir_all(dir).ok();
    }
}
