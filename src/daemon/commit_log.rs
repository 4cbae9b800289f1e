//! The round's commit log: one file, `commit.log` in the data directory,
//! that makes a batch of journal lines durable with a single `fdatasync`.
//!
//! Each board keeps its own journal (`boards/<n>.jsonl`, the source of
//! truth and the format users read). With one file per board, syncing a
//! batch costs one `fdatasync` per board, and a virtual disk gives only a
//! few thousand a second. So the writer appends each line to its journal
//! without syncing it, writes the whole batch to the commit log as records
//! (the journal, the offset the line was written at, the line), and syncs
//! only the log. A line counts once its record is synced.
//!
//! The journals are synced later, all at once, at a *checkpoint*: when the
//! log has grown past [`CHECKPOINT_BYTES`], the log is renamed
//! `commit.log.old`, a new one started, and a thread syncs the journals
//! written meanwhile and then removes the old log, so the writer never waits
//! for thousands of syncs; at a clean stop the same is done in place. After
//! a crash, [`recover`] runs before any journal is opened and writes back
//! every logged line a journal lost with the page cache, so a journal never
//! holds less than what was acknowledged.

use std::{
    borrow::Cow,
    collections::BTreeSet,
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};

use super::journal::still_at_path;

/// The log's file name in the data directory.
pub const NAME: &str = "commit.log";

/// The log before the last checkpoint, while its journals are being synced.
pub const OLD_NAME: &str = "commit.log.old";

/// The log's size past which the journals are synced and the log emptied.
pub const CHECKPOINT_BYTES: u64 = 128 << 20;

/// How often the log is checked to still be the file at its path.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// One logged journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record<'a> {
    /// The journal, relative to the data directory when it is inside it.
    journal: Cow<'a, Path>,
    /// Where in the journal the line starts.
    offset: u64,
    /// The line, without its newline.
    line: Cow<'a, str>,
}

/// The open log, owned by the journal writer.
#[derive(Debug)]
pub struct CommitLog {
    dir: PathBuf,
    path: PathBuf,
    file: File,
    len: u64,
    /// Journals written since the last checkpoint.
    dirty: BTreeSet<PathBuf>,
    checked_at: Instant,
    /// The thread syncing the journals of the last checkpoint.
    syncer: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    /// The log's size past which a checkpoint starts.
    checkpoint_bytes: u64,
}

/// A line to log: its journal, where it was written, its bytes (with the
/// newline).
pub struct Logged<'a> {
    /// The journal's path.
    pub journal: &'a Path,
    /// The offset the line was written at.
    pub offset: u64,
    /// The line's bytes.
    pub text: &'a [u8],
}

impl CommitLog {
    /// Opens (creating it) the log of data directory `dir`. Call
    /// [`recover`] first: the log is emptied.
    pub fn open(dir: &Path) -> std::io::Result<CommitLog> {
        let path = dir.join(NAME);
        let file = create(&path)?;
        Ok(CommitLog {
            dir: dir.to_owned(),
            path,
            file,
            len: 0,
            dirty: BTreeSet::new(),
            checked_at: Instant::now(),
            syncer: None,
            checkpoint_bytes: CHECKPOINT_BYTES,
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Logs `lines` and syncs the log once: from then on they count.
    pub fn append(&mut self, lines: &[Logged<'_>]) -> std::io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        if self.checked_at.elapsed() >= CHECK_EVERY {
            self.checked_at = Instant::now();
            if !still_at_path(&self.file, &self.path)? {
                // Removed under us (`rm -rf` of the data directory): what the
                // old log held must reach the journals before a new log
                // starts.
                self.sync_journals()?;
                if let Some(parent) = self.path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                self.file = create(&self.path)?;
                self.len = 0;
            }
        }
        let mut bytes = Vec::new();
        for l in lines {
            let journal = l.journal.strip_prefix(&self.dir).unwrap_or(l.journal);
            // Borrowed: the writer logs thousands of lines a second.
            let record = Record {
                journal: Cow::Borrowed(journal),
                offset: l.offset,
                line: String::from_utf8_lossy(l.text.strip_suffix(b"\n").unwrap_or(l.text)),
            };
            serde_json::to_writer(&mut bytes, &record).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            if !self.dirty.contains(l.journal) {
                self.dirty.insert(l.journal.to_owned());
            }
        }
        if let Err(e) = self
            .file
            .write_all(&bytes)
            .and_then(|()| self.file.sync_data())
        {
            // Nothing of a failed batch may stay to run into the next
            // record; the journals' lines of the batch do not count.
            let _ = self.file.set_len(self.len);
            return Err(e);
        }
        self.len += bytes.len() as u64;
        if self.len >= self.checkpoint_bytes {
            self.checkpoint_aside()?;
        }
        Ok(())
    }

    /// Starts a new log and syncs the old one's journals on a thread of
    /// their own; the old log goes once they are synced.
    fn checkpoint_aside(&mut self) -> std::io::Result<()> {
        self.wait_for_syncer()?;
        let old = self.dir.join(OLD_NAME);
        std::fs::rename(&self.path, &old)?;
        self.file = create(&self.path)?;
        self.len = 0;
        let dirty = std::mem::take(&mut self.dirty);
        let dir = self.dir.clone();
        self.syncer = Some(
            std::thread::Builder::new()
                .name("journal-checkpoint".to_owned())
                .spawn(move || {
                    sync_all(&dirty)?;
                    std::fs::remove_file(&old)?;
                    File::open(&dir)?.sync_all()
                })?,
        );
        Ok(())
    }

    fn wait_for_syncer(&mut self) -> std::io::Result<()> {
        match self.syncer.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the checkpoint thread failed")),
            None => Ok(()),
        }
    }

    /// Syncs every journal written since the last checkpoint, then empties
    /// the log (at a clean stop).
    pub fn checkpoint(&mut self) -> std::io::Result<()> {
        self.wait_for_syncer()?;
        self.sync_journals()?;
        self.file.set_len(0)?;
        self.file.sync_all()?;
        self.len = 0;
        Ok(())
    }

    fn sync_journals(&mut self) -> std::io::Result<()> {
        sync_all(&std::mem::take(&mut self.dirty))
    }
}

/// Syncs each of `journals`. Syncing through another descriptor writes the
/// file's dirty pages all the same. A journal gone from its path was caught
/// by its own check, and its lines are written back from its open file.
fn sync_all(journals: &BTreeSet<PathBuf>) -> std::io::Result<()> {
    for journal in journals {
        if let Ok(file) = File::open(journal) {
            file.sync_data()?;
        }
    }
    Ok(())
}

fn create(path: &Path) -> std::io::Result<File> {
    // Appending: after a failed write is cut off, the next record starts
    // where the log ends.
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    file.set_len(0)?;
    file.sync_all()?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(file)
}

/// Writes back every line the log holds that its journal lost in a crash,
/// syncs the journals, and empties the log. Returns a note for each
/// journal mended. Run before any journal is opened.
pub fn recover(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut mended: std::collections::BTreeMap<PathBuf, usize> = Default::default();
    let mut touched = BTreeSet::new();
    // Each journal is opened once however many records name it: a log near
    // its checkpoint holds hundreds of thousands of records.
    let mut open: std::collections::HashMap<PathBuf, Option<OpenJournal>> = Default::default();
    // The log before the last checkpoint first: its lines come first.
    for name in [OLD_NAME, NAME] {
        let bytes = match std::fs::read(dir.join(name)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        // Only complete lines: a record cut short by the crash was never
        // synced, so its line was never acknowledged.
        for raw in bytes.split_inclusive(|&b| b == b'\n') {
            let Some(raw) = raw.strip_suffix(b"\n") else {
                break;
            };
            let Ok(record) = serde_json::from_slice::<Record>(raw) else {
                continue;
            };
            let journal = dir.join(&record.journal);
            let entry = match open.entry(journal.clone()) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(OpenJournal::open(&journal)?)
                }
            };
            let Some(file) = entry else {
                continue;
            };
            if file.write_back(&record)? {
                *mended.entry(journal.clone()).or_default() += 1;
            }
            touched.insert(journal);
        }
    }
    sync_all(&touched)?;
    match std::fs::remove_file(dir.join(OLD_NAME)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    if let Ok(log) = OpenOptions::new().write(true).open(dir.join(NAME)) {
        log.set_len(0)?;
        log.sync_all()?;
    }
    Ok(mended
        .into_iter()
        .map(|(journal, n)| {
            format!(
                "{}: {n} acknowledged line(s) lost in a crash were written back from the commit log",
                journal.display()
            )
        })
        .collect())
}

/// A journal open for recovery, with its length as recovery left it.
struct OpenJournal {
    file: File,
    len: u64,
}

impl OpenJournal {
    /// The journal at `path`, or `None` if it cannot be opened (its record
    /// is skipped: the start's checks name a missing journal).
    fn open(path: &Path) -> std::io::Result<Option<OpenJournal>> {
        let Ok(file) = OpenOptions::new().read(true).write(true).open(path) else {
            return Ok(None);
        };
        let len = file.metadata()?.len();
        Ok(Some(OpenJournal { file, len }))
    }

    /// Puts `record`'s line back if the journal stops where the line
    /// starts, or inside it; a journal that holds the line already, or
    /// that stops before it (a gap: the start's checks will refuse it), is
    /// left alone. Returns whether it wrote.
    fn write_back(&mut self, record: &Record<'_>) -> std::io::Result<bool> {
        use std::os::unix::fs::FileExt;

        let mut text = record.line.as_bytes().to_vec();
        text.push(b'\n');
        let end = record.offset + text.len() as u64;
        if self.len < record.offset {
            return Ok(false);
        }
        if self.len >= end {
            // The line is there, or something else stands where it was
            // acknowledged: the start's checks name the latter; never
            // overwrite it.
            return Ok(false);
        }
        self.file.set_len(record.offset)?;
        self.file.write_all_at(&text, record.offset)?;
        self.len = end;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(journal: &'a Path, offset: u64, text: &'a [u8]) -> Logged<'a> {
        Logged {
            journal,
            offset,
            text,
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A journal that lost several lines gets each back, in order, from
    /// one opening: the length recovery tracks follows its own writes.
    #[test]
    fn several_lines_lost_from_one_journal_are_all_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("boards/1.jsonl");
        let mut log = CommitLog::open(dir.path()).unwrap();
        write(&a, "one\ntwo\nthree\n");
        log.append(&[at(&a, 0, b"one\n"), at(&a, 4, b"two\n")])
            .unwrap();
        log.append(&[at(&a, 8, b"three\n")]).unwrap();
        write(&a, "on");
        drop(log);
        let notes = recover(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\nthree\n");
        assert!(notes[0].contains(": 3 acknowledged"), "{notes:?}");
    }

    /// A crash lost the journals' last lines from the page cache; the log
    /// had them synced: they are written back, the rest left as it is, and
    /// the log is emptied.
    #[test]
    fn lines_a_crash_took_from_the_journals_are_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("boards/1.jsonl");
        let b = dir.path().join("boards/2.jsonl");
        let mut log = CommitLog::open(dir.path()).unwrap();
        write(&a, "one\ntwo\n");
        write(&b, "uno\n");
        log.append(&[
            at(&a, 0, b"one\n"),
            at(&a, 4, b"two\n"),
            at(&b, 0, b"uno\n"),
        ])
        .unwrap();
        log.append(&[at(&b, 4, b"dos\n")]).unwrap();
        // The crash: journal 1 lost its second line, journal 2 was cut in
        // the middle of its second, and a third record was torn.
        write(&a, "one\n");
        write(&b, "uno\ndo");
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join(NAME))
            .unwrap();
        f.write_all(b"{\"journal\":\"boards/2.jsonl\",\"off")
            .unwrap();
        drop(log);
        let notes = recover(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "uno\ndos\n");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(std::fs::read(dir.path().join(NAME)).unwrap().len(), 0);
        // Nothing more to do the second time.
        assert!(recover(dir.path()).unwrap().is_empty());
    }

    /// A journal that stops before a logged line (a gap) or holds other
    /// bytes where it was is not written to: the start's checks name it.
    #[test]
    fn a_journal_with_a_gap_or_other_bytes_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("boards/1.jsonl");
        let mut log = CommitLog::open(dir.path()).unwrap();
        write(&a, "one\n");
        log.append(&[at(&a, 10, b"ten\n")]).unwrap();
        log.append(&[at(&a, 0, b"xxx\n")]).unwrap();
        drop(log);
        assert!(recover(dir.path()).unwrap().is_empty());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
    }

    /// A crash during a checkpoint: the old log's lines are written back
    /// before the new log's.
    #[test]
    fn the_log_before_a_checkpoint_is_read_first() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("boards/1.jsonl");
        write(&a, "one\ntwo\n");
        let mut log = CommitLog::open(dir.path()).unwrap();
        log.append(&[at(&a, 0, b"one\n")]).unwrap();
        std::fs::rename(dir.path().join(NAME), dir.path().join(OLD_NAME)).unwrap();
        let mut log = CommitLog::open(dir.path()).unwrap();
        log.append(&[at(&a, 4, b"two\n")]).unwrap();
        write(&a, "");
        drop(log);
        assert_eq!(recover(dir.path()).unwrap().len(), 1);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\n");
        assert!(!dir.path().join(OLD_NAME).exists());
    }

    /// Past its size, the log starts anew and the old one is removed once
    /// its journals are synced, while lines go on being logged.
    #[test]
    fn a_full_log_is_set_aside_and_removed_once_its_journals_are_synced() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("boards/1.jsonl");
        write(&a, "");
        let mut log = CommitLog::open(dir.path()).unwrap();
        log.checkpoint_bytes = 1;
        for (offset, text) in [(0, b"one\n"), (4, b"two\n"), (8, b"six\n")] {
            log.append(&[Logged {
                journal: &a,
                offset,
                text,
            }])
            .unwrap();
            // Each append set its log aside: the new one is empty.
            assert_eq!(std::fs::metadata(dir.path().join(NAME)).unwrap().len(), 0);
        }
        log.checkpoint().unwrap();
        assert!(!dir.path().join(OLD_NAME).exists());
    }

    /// A checkpoint empties the log once the journals are synced; a data
    /// directory without a log recovers nothing.
    #[test]
    fn a_checkpoint_empties_the_log() {
        let dir = tempfile::tempdir().unwrap();
        assert!(recover(dir.path()).unwrap().is_empty());
        let a = dir.path().join("boards/1.jsonl");
        write(&a, "one\n");
        let mut log = CommitLog::open(dir.path()).unwrap();
        log.append(&[at(&a, 0, b"one\n")]).unwrap();
        assert!(std::fs::metadata(dir.path().join(NAME)).unwrap().len() > 0);
        log.checkpoint().unwrap();
        assert_eq!(std::fs::metadata(dir.path().join(NAME)).unwrap().len(), 0);
    }
}
