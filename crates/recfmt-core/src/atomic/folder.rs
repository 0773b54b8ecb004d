//! Folder outputs: a recording stored as a folder of files, written as a temporary folder
//! and moved into place; and the folders a run creates for its outputs, removed again when
//! the run fails or is interrupted before anything was moved into them.

use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{
    Move, Pending, Replace, already_exists, builder, check_target, create_pending, move_all,
    temp_prefix, unregister,
};

/// Folders created for an output (a missing output folder and its missing parents), removed
/// again when still empty if the output fails ([`Drop`]) or the process is interrupted
/// ([`super::remove_pending`]); [`CreatedDirs::keep`] once the output is in place.
#[derive(Debug, Default)]
pub struct CreatedDirs {
    /// Outermost first.
    dirs: Vec<PathBuf>,
}

impl CreatedDirs {
    /// Creates `path` and its missing parents, remembering which of them this call made.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut missing = Vec::new();
        let mut p = path;
        while !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err() {
            missing.push(p.to_path_buf());
            match p.parent() {
                Some(parent) => p = parent,
                None => break,
            }
        }
        let mut created = CreatedDirs::default();
        for dir in missing.into_iter().rev() {
            match create_pending(
                || std::fs::create_dir(&dir),
                |()| Pending::CreatedDir(dir.clone()),
            ) {
                Ok(()) => created.dirs.push(dir),
                // Another run made it meanwhile: not ours to remove.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(created)
    }

    /// The output is in place: the folders stay.
    pub fn keep(mut self) {
        for dir in std::mem::take(&mut self.dirs) {
            unregister(&dir);
        }
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        for dir in self.dirs.iter().rev() {
            unregister(dir);
            // Only when empty: never what someone else put there.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A recording stored as a folder (a USVLOG session, an ICAREC recording), written into a
/// temporary folder beside the target and moved into place by [`AtomicDir::commit`].
///
/// A target that does not exist (or is an empty folder) receives the whole folder. A folder
/// that already holds files is refused unless replacing is allowed; then the new files move
/// into it as one, replacing regular files of the same names and keeping the others, and a
/// failure takes back every file already moved. Dropped uncommitted, the temporary folder is
/// removed, with the folders created for it.
///
/// ```
/// use recfmt_core::{AtomicDir, Replace};
/// let base = std::env::temp_dir().join(format!("recfmt-doc-dir-{}", std::process::id()));
/// let target = base.join("session");
/// let dir = AtomicDir::create(&target, Replace::Never, &["data.bin"]).unwrap();
/// std::fs::write(dir.path().join("data.bin"), b"1234").unwrap();
/// assert!(!target.exists());
/// dir.commit().unwrap();
/// assert_eq!(std::fs::read(target.join("data.bin")).unwrap(), b"1234");
/// assert!(AtomicDir::create(&target, Replace::Never, &["data.bin"]).is_err());
/// # std::fs::remove_dir_all(&base).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicDir {
    temp: Option<TempDir>,
    path: PathBuf,
    target: PathBuf,
    replace: Replace,
    parents: Option<CreatedDirs>,
}

impl AtomicDir {
    /// Creates the temporary folder for `target` (and `target`'s missing parents), after
    /// checking the target: a folder holding anything is refused unless `replace` allows
    /// replacing, and each of `files` (the names the output will hold, as far as known) must
    /// then be absent or a regular file.
    pub fn create(target: &Path, replace: Replace, files: &[&str]) -> io::Result<Self> {
        check_folder(target, replace, files)?;
        let parents = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => CreatedDirs::create(p)?,
            _ => CreatedDirs::default(),
        };
        let (dir, prefix) = temp_prefix(target)?;
        let temp = create_pending(
            || builder(&prefix, 0o777).tempdir_in(&dir),
            |temp| Pending::Temporary(temp.path().to_path_buf()),
        )?;
        let path = temp.path().to_path_buf();
        Ok(AtomicDir {
            temp: Some(temp),
            path,
            target: target.to_path_buf(),
            replace,
            parents: Some(parents),
        })
    }

    /// The temporary folder to write into.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the finished folder into place (see the type's documentation).
    pub fn commit(mut self) -> io::Result<()> {
        let temp = self
            .temp
            .take()
            .ok_or_else(|| io::Error::other("folder already moved into place"))?;
        // From here on this function removes the temporary folder (it stays registered).
        let path = temp.keep();
        let result = self.move_in(&path);
        // Gone when renamed; else empty (files moved in) or the failed output.
        let _ = std::fs::remove_dir_all(&path);
        unregister(&path);
        if result.is_ok()
            && let Some(parents) = self.parents.take()
        {
            parents.keep();
        }
        result
    }

    fn move_in(&self, path: &Path) -> io::Result<()> {
        let empty = match std::fs::symlink_metadata(&self.target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return std::fs::rename(path, &self.target);
            }
            Err(e) => return Err(e),
            Ok(m) if !m.is_dir() => return Err(not_a_folder(&self.target)),
            Ok(_) => std::fs::read_dir(&self.target)?.next().is_none(),
        };
        if empty {
            // Renaming over an empty folder is atomic; a file appearing meanwhile fails it.
            return std::fs::rename(path, &self.target);
        }
        if self.replace == Replace::Never {
            return Err(already_exists(&self.target));
        }
        let mut moves = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            if !entry.file_type()?.is_file() {
                return Err(io::Error::other(format!(
                    "{} holds a folder; it cannot be moved into an existing folder",
                    path.display()
                )));
            }
            moves.push(Move {
                from: entry.path(),
                to: self.target.join(entry.file_name()),
                replace: self.replace,
            });
        }
        moves.sort_by(|a, b| a.to.cmp(&b.to));
        move_all(&moves).map_err(|(_, e)| e)
    }
}

impl Drop for AtomicDir {
    fn drop(&mut self) {
        // Uncommitted: the folder goes with its `TempDir`, then the parents made for it.
        if self.temp.is_some() {
            unregister(&self.path);
        }
        self.temp = None;
        self.parents = None;
    }
}

fn not_a_folder(target: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} exists and is not a folder; refusing to replace it",
            target.display()
        ),
    )
}

/// Checks a folder output's target before any work (see [`AtomicDir::create`]): it does not
/// exist, is an empty folder, or is a folder that `replace` allows writing into whose
/// `files` are absent or regular files.
pub fn check_folder(target: &Path, replace: Replace, files: &[&str]) -> io::Result<()> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) if !m.is_dir() => return Err(not_a_folder(target)),
        Ok(_) => {}
    }
    if std::fs::read_dir(target)?.next().is_none() {
        return Ok(());
    }
    if replace == Replace::Never {
        return Err(already_exists(target));
    }
    for name in files {
        check_target(&target.join(name), replace)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::tests::{SERIAL, names, scratch};

    fn write(dir: &AtomicDir, files: &[(&str, &str)]) {
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
    }

    #[test]
    fn a_folder_holding_files_is_refused_unless_replacing() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let base = scratch("folder");
        let target = base.join("rec");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("mine.txt"), "precious").expect("write");
        let err = AtomicDir::create(&target, Replace::Never, &["a"]).expect_err("refused");
        assert!(err.to_string().contains("--force"), "{err}");
        // Replacing: new files move in, unrelated ones stay.
        let dir = AtomicDir::create(&target, Replace::RegularFile, &["a"]).expect("create");
        write(&dir, &[("a", "new a")]);
        dir.commit().expect("commit");
        assert_eq!(names(&target), ["a", "mine.txt"]);
        assert_eq!(names(&base), ["rec"]);
        std::fs::remove_dir_all(base).ok();
    }

    #[test]
    fn a_failed_move_into_a_folder_takes_every_file_back() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let base = scratch("takeback");
        let target = base.join("rec");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("a"), "old a").expect("write");
        let dir = AtomicDir::create(&target, Replace::RegularFile, &["a", "b", "c"]).expect("ok");
        write(&dir, &[("a", "new a"), ("b", "new b"), ("c", "new c")]);
        // c becomes something that may not be replaced after the check.
        std::fs::create_dir(target.join("c")).expect("mkdir");
        assert!(dir.commit().is_err());
        assert_eq!(names(&target), ["a", "c"]);
        assert_eq!(
            std::fs::read_to_string(target.join("a")).expect("read"),
            "old a"
        );
        assert_eq!(names(&base), ["rec"], "no temporary folder left");
        // A link among the known names is refused before anything is written.
        std::fs::remove_dir(target.join("c")).expect("rmdir");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", target.join("c")).expect("link");
            assert!(AtomicDir::create(&target, Replace::RegularFile, &["c"]).is_err());
        }
        std::fs::remove_dir_all(base).ok();
    }

    #[test]
    fn folders_made_for_a_failed_output_are_removed() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let base = scratch("created");
        let dir = AtomicDir::create(&base.join("x/y/rec"), Replace::Never, &[]).expect("create");
        assert_eq!(names(&base.join("x/y")).len(), 1);
        drop(dir);
        assert!(names(&base).is_empty(), "{:?}", names(&base));
        let kept = CreatedDirs::create(&base.join("p/q")).expect("mkdir");
        std::fs::write(base.join("p/q/file"), "x").expect("write");
        drop(kept);
        assert_eq!(names(&base.join("p/q")), ["file"], "a folder in use stays");
        std::fs::remove_dir_all(base).ok();
    }
}
