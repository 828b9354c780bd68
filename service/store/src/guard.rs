//! What stands between a data folder and a server that would damage or misread it: an exclusive
//! lock (one server per folder), checks of the database file before SQLite opens it, and the
//! acknowledged-log watermark that detects lost entries at the next start.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sqlx::{Row, SqliteConnection};

use super::StoreError;

/// The lock file of a data folder.
pub const LOCK_FILE: &str = "bete.lock";
/// Highest log entry id acknowledged to a client (8 bytes, little-endian).
pub const ACKED_FILE: &str = "bete.acked";

/// Takes the data folder's exclusive lock for as long as the returned file lives (the OS drops
/// it when the process ends, however it ends). A second server on the same folder would split
/// every table in two, with double deadline timers and house bots and log entries out of
/// sequence: it refuses to start instead.
pub fn lock(data_dir: &Path) -> Result<File, StoreError> {
    let path = data_dir.join(LOCK_FILE);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::Damaged(format!("cannot open {}: {e}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked(data_dir.to_path_buf())),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Damaged(format!(
            "cannot lock {}: {e}",
            path.display()
        ))),
    }
}

/// Checks `bete.sqlite3` before SQLite opens it (SQLite takes a zero-length file for a new,
/// empty database, and reads a truncated one until it meets the missing pages).
pub fn check_file(path: &Path) -> Result<(), StoreError> {
    let len = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StoreError::Damaged(format!("{}: {e}", path.display()))),
    };
    let damaged = |what: String| {
        StoreError::Damaged(format!(
            "{} {what}; restore the data folder from a backup (or move the file away to start \
             with an empty database)",
            path.display()
        ))
    };
    if len == 0 {
        return Err(damaged("is empty (0 bytes), not a bete database".into()));
    }
    let mut header = [0u8; 100];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|_| damaged(format!("is {len} bytes, shorter than a database header")))?;
    if &header[..16] != b"SQLite format 3\0" {
        return Err(damaged("is not an SQLite database".into()));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    // The header's page count is only in force when its "version-valid-for" number equals
    // the change counter (SQLite's file format, 1.3.8: otherwise SQLite sizes the database by
    // its file). And a crash in the middle of a checkpoint leaves page 1 (the new count)
    // written before the pages after the old end: SQLite completes that from the WAL, so with
    // a WAL beside it a short file is not damage (quick_check, later, reads every page).
    let valid_for_counter = header[92..96] == header[24..28];
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_pending = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    if valid_for_counter && !wal_pending && len < pages.saturating_mul(page_size) {
        return Err(damaged(format!(
            "is truncated: {len} bytes, but its header counts {pages} pages of {page_size} bytes"
        )));
    }
    Ok(())
}

/// SQLite's own check of every page and index, then every table's log chain, then the
/// acknowledged watermark. Run once at start, before anything is recovered or served.
pub async fn check_database(conn: &mut SqliteConnection, acked: &Path) -> Result<(), StoreError> {
    let problems: Vec<String> = sqlx::query_scalar("PRAGMA quick_check(5)")
        .fetch_all(&mut *conn)
        .await?;
    if problems != ["ok"] {
        return Err(StoreError::Damaged(format!(
            "SQLite's quick_check found damage: {}; restore the data folder from a backup",
            problems.join("; ")
        )));
    }
    // Every table's chain: as many entries as its head's seq says, numbered 0..=seq.
    // (Lower-case `as`: statements are logged, and a test reads the log for card codes.)
    let broken: Vec<i64> = sqlx::query_scalar(
        "SELECT h.tbl FROM log_heads h LEFT JOIN \
             (SELECT tbl, count(*) as n, min(seq) as lo, max(seq) as hi FROM log GROUP BY tbl) c \
             ON c.tbl = h.tbl \
         WHERE c.n IS NOT h.seq + 1 OR c.lo IS NOT 0 OR c.hi IS NOT h.seq LIMIT 5",
    )
    .fetch_all(&mut *conn)
    .await?;
    if !broken.is_empty() {
        return Err(StoreError::Damaged(format!(
            "the log of table cursor(s) {broken:?} has gaps or stray entries; restore the data \
             folder from a backup"
        )));
    }
    let newest = newest_entry(conn).await?;
    if let Some(acked_id) = read_acked(acked)?
        && newest < acked_id
    {
        return Err(StoreError::Damaged(format!(
            "acknowledged log entries are missing: the log ends at entry {newest}, but entries up \
             to {acked_id} were acknowledged to clients (a damaged or lost WAL file?). Restore \
             the data folder from a backup; to serve what is left anyway, delete {}",
            acked.display()
        )));
    }
    Ok(())
}

/// The id of the newest log entry (0 for none).
pub async fn newest_entry(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query("SELECT coalesce(max(id), 0) FROM log")
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?)
}

fn read_acked(path: &Path) -> Result<Option<i64>, StoreError> {
    match std::fs::read(path) {
        Ok(b) => match <[u8; 8]>::try_from(b.as_slice()) {
            Ok(a) => Ok(Some(i64::from_le_bytes(a))),
            // A torn write of the 8 bytes (a crash mid-write): no claim.
            Err(_) => Ok(None),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::Damaged(format!("{}: {e}", path.display()))),
    }
}

/// Records the newest acknowledged entry after each commit. Written in place without fsync: it
/// is written only after the commit it names is durable, so it can only be behind the
/// database, never ahead; a kill -9 keeps it (the page cache survives), and only a power cut
/// can make it stale, which hides a loss but never invents one.
#[derive(Debug)]
pub struct Watermark {
    file: Option<File>,
    path: PathBuf,
    written: i64,
}

impl Watermark {
    pub fn open(path: PathBuf, newest: i64) -> Watermark {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| tracing::warn!(error = %e, path = %path.display(), "cannot open the watermark file; lost entries will not be detected"))
            .ok();
        let mut w = Watermark {
            file,
            path,
            written: -1,
        };
        w.record(newest);
        w
    }

    pub fn record(&mut self, newest: i64) {
        use std::os::unix::fs::FileExt;
        if newest == self.written {
            return;
        }
        if let Some(f) = &self.file {
            if let Err(e) = f.write_all_at(&newest.to_le_bytes(), 0) {
                tracing::warn!(error = %e, path = %self.path.display(), "cannot write the watermark");
                return;
            }
            self.written = newest;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A database header counting `pages` pages of 4096 bytes, its count in force or not.
    fn header(pages: u32, in_force: bool) -> Vec<u8> {
        let mut h = vec![0u8; 4096];
        h[..16].copy_from_slice(b"SQLite format 3\0");
        h[16..18].copy_from_slice(&4096u16.to_be_bytes());
        h[24..28].copy_from_slice(&7u32.to_be_bytes());
        h[28..32].copy_from_slice(&pages.to_be_bytes());
        let valid_for: u32 = if in_force { 7 } else { 6 };
        h[92..96].copy_from_slice(&valid_for.to_be_bytes());
        h
    }

    /// A file shorter than its header's count is truncated, unless the count is not in force
    /// or a WAL beside it holds the rest (a crash in the middle of a checkpoint).
    #[test]
    fn a_short_file_is_damage_only_without_a_wal_and_with_its_count_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bete.sqlite3");
        std::fs::write(&db, header(3, true)).unwrap();
        let e = check_file(&db).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        std::fs::write(dir.path().join("bete.sqlite3-wal"), b"frames").unwrap();
        check_file(&db).unwrap();
        std::fs::remove_file(dir.path().join("bete.sqlite3-wal")).unwrap();
        std::fs::write(&db, header(3, false)).unwrap();
        check_file(&db).unwrap();
        std::fs::write(&db, header(1, true)).unwrap();
        check_file(&db).unwrap();
    }
}
