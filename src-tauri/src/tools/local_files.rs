//! Files a tool reads where they are, by absolute path (`set_file_input`'s files,
//! `storage_state` import's file): never one in the daemon's data directory (another
//! session's artifacts and downloads, exported states, `broker.json`, profiles, the vault),
//! the calling session's own directories aside (a download it received, a file it wrote).

use serde_json::json;

use super::ToolContext;
use crate::error::{Error, Result};

/// `E_BAD_REQUEST` naming `field` (`details.reason` `inside_data_dir`) when `raw` lies in
/// the daemon's data directory (through any symlink or `..`) outside this session's own
/// directories.
pub(super) fn outside_data_dir(context: &ToolContext, field: &str, raw: &str) -> Result<()> {
    if context.sessions.policy().guards(std::path::Path::new(raw), Some(&context.session.dirs.root)) {
        return Err(Error::bad_request(format!(
            "{field}: {raw} is inside the daemon's data directory: give a file of your own (or one of this session's)"
        ))
        .with_details(json!({ "field": field, "reason": "inside_data_dir", "path": raw })));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{CreateSession, Owner, SessionLimits, SessionServices, SessionTable};
    use crate::testing::TempDir;
    use crate::tools::ToolRegistry;

    #[tokio::test]
    async fn another_sessions_files_and_the_daemons_own_are_refused_this_sessions_and_outside_files_are_not() {
        let dir = TempDir::new("malo-local-files-tests");
        let services = SessionServices::new(crate::engine::fake::fake_engine(), Default::default(), Default::default(), dir.path(), None);
        let owner = Owner { lease_id: "lease-test".into(), agent_id: "agent".into(), lease_dir: dir.path().join("lease"), port: 0 };
        let sessions = std::sync::Arc::new(SessionTable::new(owner, SessionLimits { max_sessions: 2, max_download_bytes: 1 }, services));
        let session = sessions.create(CreateSession::default()).await.unwrap();
        let context = ToolContext::new(session.clone(), sessions.clone(), std::sync::Arc::new(ToolRegistry::standard()));
        let write = |path: &std::path::Path| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
            path.display().to_string()
        };
        let elsewhere = TempDir::new("malo-local-files-elsewhere");
        let other = session.dirs.root.parent().unwrap().join("sess-other");
        let refused = [
            write(&other.join("artifacts/state.json")),
            write(&other.join("downloads/report.pdf")),
            write(&dir.path().join("broker.json")),
            write(&dir.path().join("profiles/work/cookies.sqlite")),
            // `..` back out of the session's own directory is still the data directory.
            format!("{}/../sess-other/artifacts/state.json", session.dirs.root.display()),
        ];
        for raw in &refused {
            let error = outside_data_dir(&context, "files[1]", raw).unwrap_err();
            assert_eq!(error.code, crate::error::ErrorCode::BadRequest, "{raw}");
            assert_eq!(error.details, json!({ "field": "files[1]", "reason": "inside_data_dir", "path": raw }), "{raw}");
            assert!(error.message.starts_with("files[1]: "), "{}", error.message);
        }
        // A symlink outside the data directory that leads into it is refused too.
        let link = elsewhere.path().join("link.json");
        std::os::unix::fs::symlink(dir.path().join("broker.json"), &link).unwrap();
        assert!(outside_data_dir(&context, "files[0]", &link.display().to_string()).is_err());
        for allowed in [
            write(&session.dirs.artifacts.join("mine.json")),
            write(&session.dirs.downloads.join("received.pdf")),
            write(&elsewhere.path().join("upload.txt")),
        ] {
            assert!(outside_data_dir(&context, "files[0]", &allowed).is_ok(), "{allowed}");
        }
    }
}
