//! One daemon per data directory: an exclusive OS file lock on
//! `<data_dir>/lock`, held for the daemon's life. The operating system
//! releases it when the process ends however it ends (a SIGKILL included),
//! so a stale lock never blocks a restart.
//!
//! The lock is held by an open file descriptor (`flock`), which no removal
//! of the file releases; but a removed lock file (an `rm -rf` of the data
//! directory) would let a second daemon lock a new file of the same name.
//! So while the daemon runs, [`DirLock::keep`] is called every
//! [`KEEP_EVERY`]: it puts the lock file back (locked by this process), and
//! the token and the list of journals with it, as the boards put their
//! journals back.

use std::{
    fs::{File, OpenOptions, TryLockError},
    io::{Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

/// Why the data directory cannot be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "{dir} is in use by another eboard daemon (pid {pid}); stop it first, or give this one another --data-dir"
    )]
    Held {
        /// The data directory.
        dir: PathBuf,
        /// The pid the holder wrote, or `unknown`.
        pid: String,
    },
    /// The lock file cannot be opened or locked.
    #[error("{path}: cannot lock: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

/// How often a running daemon checks that its lock file is still there.
pub const KEEP_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    dir: PathBuf,
}

/// What [`DirLock::keep`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Kept {
    /// The lock file is the one this process locked.
    Held,
    /// It was removed or replaced; a new one is locked at its path.
    Recreated,
}

impl DirLock {
    /// Checks that the lock file is still the one this process holds; puts
    /// a new one (locked) at its path when it is not. Blocking (a few file
    /// system calls).
    pub fn keep(&mut self) -> Result<Kept, LockError> {
        let path = self.dir.join("lock");
        let here =
            super::journal::still_at_path(&self.file, &path).map_err(|source| LockError::Io {
                path: path.clone(),
                source,
            })?;
        if here {
            return Ok(Kept::Held);
        }
        std::fs::create_dir_all(&self.dir).map_err(|source| LockError::Io {
            path: self.dir.clone(),
            source,
        })?;
        *self = lock_data_dir(&self.dir)?;
        Ok(Kept::Recreated)
    }
}

/// Locks `data_dir` for this process and writes its pid in the lock file.
pub fn lock_data_dir(data_dir: &Path) -> Result<DirLock, LockError> {
    let path = data_dir.join("lock");
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    // Not truncated on open: the pid in it belongs to the holder until the
    // lock is ours.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let pid = text.trim();
            return Err(LockError::Held {
                dir: data_dir.to_path_buf(),
                pid: if pid.is_empty() { "unknown" } else { pid }.to_owned(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    Ok(DirLock {
        file,
        dir: data_dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_data_dir(dir.path()).unwrap();
        let err = lock_data_dir(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        drop(first);
        lock_data_dir(dir.path()).unwrap();
    }

    /// Issue 38, fault 1: after an `rm -rf` of the data directory a second
    /// daemon could lock a new lock file; the running one puts its lock
    /// back, and the second is refused again.
    #[test]
    fn a_removed_lock_is_put_back_and_a_second_daemon_still_refused() {
        let parent = tempfile::tempdir().unwrap();
        let data = parent.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let mut first = lock_data_dir(&data).unwrap();
        assert_eq!(first.keep().unwrap(), Kept::Held);
        std::fs::remove_dir_all(&data).unwrap();
        assert_eq!(first.keep().unwrap(), Kept::Recreated);
        assert_eq!(first.keep().unwrap(), Kept::Held);
        let err = lock_data_dir(&data).unwrap_err();
        assert!(matches!(err, LockError::Held { .. }), "{err}");
    }
}
