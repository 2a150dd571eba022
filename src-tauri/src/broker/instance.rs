//! One daemon per data directory: an exclusive lock on `<data-dir>/daemon.lock`, and
//! `broker.json` (mode 0600) that tells clients where the broker is and its token.
//!
//! The lock is an OS file lock, so it is released when the process dies, even by
//! SIGKILL: a `broker.json` found while we hold the lock was left by a dead daemon.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What `broker.json` holds, and what the daemon prints on start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BrokerInfo {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The broker token (the file is 0600; never logged).
    pub token: String,
    /// The daemon's process id.
    pub pid: u32,
}

/// Why the daemon may not start.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// Another daemon holds the lock.
    #[error(
        "another malo daemon is already running for {data_dir} (pid {pid}, broker {endpoint}); stop it first or pass another --data-dir"
    )]
    AlreadyRunning {
        /// The data directory in question.
        data_dir: String,
        /// Its pid, or `unknown`.
        pid: String,
        /// Its endpoint, or `unknown`.
        endpoint: String,
    },
    /// The data directory or the lock file cannot be used.
    #[error("cannot use data directory {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The held single-instance lock; dropping it releases the lock.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    broker_file: PathBuf,
}

impl InstanceLock {
    /// Creates the data directory (0700) if needed and takes the lock, or explains who has it.
    pub fn acquire(data_dir: &Path) -> Result<InstanceLock, InstanceError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| InstanceError::Io { path, source }
        };
        fs::create_dir_all(data_dir).map_err(io(data_dir))?;
        let lock_path = data_dir.join("daemon.lock");
        let file = OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(&lock_path).map_err(io(&lock_path))?;
        let broker_file = data_dir.join("broker.json");
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let running = read_broker_file(&broker_file);
                return Err(InstanceError::AlreadyRunning {
                    data_dir: data_dir.display().to_string(),
                    pid: running.as_ref().map_or("unknown".into(), |info| info.pid.to_string()),
                    endpoint: running.map_or("unknown".into(), |info| info.endpoint),
                });
            }
            Err(fs::TryLockError::Error(source)) => return Err(InstanceError::Io { path: lock_path.display().to_string(), source }),
        }
        // Only the lock holder touches the directory's mode.
        let _ = fs::set_permissions(data_dir, fs::Permissions::from_mode(0o700));
        Ok(InstanceLock { _file: file, broker_file })
    }

    /// A `broker.json` left by a daemon that died without cleaning up, if any.
    pub fn stale_broker_file(&self) -> Option<BrokerInfo> {
        read_broker_file(&self.broker_file)
    }

    /// Writes `broker.json` atomically with mode 0600, replacing any stale one.
    pub fn write_broker_file(&self, info: &BrokerInfo) -> std::io::Result<()> {
        let temporary = self.broker_file.with_extension("json.tmp");
        let _ = fs::remove_file(&temporary);
        let mut file = OpenOptions::new().create_new(true).write(true).mode(0o600).open(&temporary)?;
        file.write_all(serde_json::to_string_pretty(info)?.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        fs::rename(&temporary, &self.broker_file)
    }

    /// Removes `broker.json` (on clean shutdown).
    pub fn remove_broker_file(&self) {
        let _ = fs::remove_file(&self.broker_file);
    }
}

/// Reads a `broker.json`, if there is a readable one.
pub fn read_broker_file(path: &Path) -> Option<BrokerInfo> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temporary_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("malo-instance-{name}-{}", crate::secret::random_hex(6)));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn second_lock_is_refused_and_names_the_first() {
        let dir = temporary_dir("second");
        let first = InstanceLock::acquire(&dir).unwrap();
        let info = BrokerInfo { endpoint: "http://127.0.0.1:1".into(), token: "t".into(), pid: 42 };
        first.write_broker_file(&info).unwrap();
        let mode = fs::metadata(dir.join("broker.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let refused = InstanceLock::acquire(&dir).unwrap_err().to_string();
        assert!(refused.contains("pid 42"), "{refused}");
        drop(first);
        let second = InstanceLock::acquire(&dir).unwrap();
        assert_eq!(second.stale_broker_file().unwrap().pid, 42, "stale file is visible to the new holder");
        fs::remove_dir_all(dir).unwrap();
    }
}
