//! One daemon per data directory: an exclusive OS file lock on
//! `<data_dir>/lock`, held for the daemon's life. The operating system
//! releases it when the process ends however it ends (a SIGKILL included),
//! so a stale lock never blocks a restart.

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

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
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
    Ok(DirLock { _file: file })
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
}
