//! A lock on an output folder, so two runs never write one output at once, and the cleanup
//! of what a run that died left there.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Pending, TEMP_SUFFIX, create_pending, unregister};

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
        Self::acquire_named(dir, Self::FILE_NAME)
    }

    /// Takes the lock `name` in `dir` (which must exist): one of several independent locks
    /// in one folder (a dataset locks each recording written into it).
    pub fn acquire_named(dir: &Path, name: &str) -> io::Result<Self> {
        let path = dir.join(name);
        for _ in 0..2 {
            match create_pending(
                || OpenOptions::new().write(true).create_new(true).open(&path),
                |_| Pending::Temporary(path.clone()),
            ) {
                Ok(mut f) => {
                    let pid = std::process::id();
                    match process_start_time(pid) {
                        Some(started) => writeln!(f, "{pid} {started}")?,
                        None => writeln!(f, "{pid}")?,
                    }
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
    /// Removes the temporary files and folders (`.<name>.<random>.partial`) in `dir` that a
    /// run which died (SIGKILL, power loss) left behind. Only under this lock, so that no
    /// other run is writing them: the lock is on `dir` or on a folder above it.
    pub fn remove_leftovers(&self, dir: &Path) -> io::Result<usize> {
        let held = self.path.parent().unwrap_or(Path::new(""));
        if !dir.starts_with(held) {
            return Err(io::Error::other(format!(
                "{} is not under the locked folder {}",
                dir.display(),
                held.display()
            )));
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with('.') && name.ends_with(TEMP_SUFFIX)) {
                continue;
            }
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
            removed += 1;
        }
        Ok(removed)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::tests::{SERIAL, names, scratch};

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

    #[test]
    fn leftovers_of_a_dead_run_are_removed_under_the_lock_only() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("leftovers");
        let sub = dir.join("source=a");
        std::fs::create_dir(&sub).expect("mkdir");
        std::fs::write(sub.join(".part-0.parquet.abcdefgh12345678.partial"), "x").expect("write");
        std::fs::create_dir(sub.join(".session.abcdefgh12345678.partial")).expect("mkdir");
        std::fs::write(sub.join("part-0.parquet"), "kept").expect("write");
        let lock = DirLock::acquire(&dir).expect("lock");
        assert_eq!(lock.remove_leftovers(&sub).expect("clean"), 2);
        assert_eq!(names(&sub), ["part-0.parquet"]);
        assert!(
            lock.remove_leftovers(Path::new("/")).is_err(),
            "outside the lock"
        );
        drop(lock);
        std::fs::remove_dir_all(dir).ok();
    }
}
