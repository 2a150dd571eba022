//! malo is two binaries, installed side by side. `malo` (the CLI, the MCP server, the
//! rest of the command line) links neither WebKit nor GTK's widgets (GDK 3 only, for key
//! names), so it starts in 10-20 ms: with WebKit's 169 libraries, every one linked `-z
//! now`, the dynamic loader alone took 70 ms before `main`, paid by every CLI call and by
//! every `malo mcp` before it could start a daemon. `malo-daemon` links them and runs
//! `malo daemon` and `malo doctor`, which `malo` hands over to it.

use std::ffi::OsString;
use std::path::PathBuf;

/// The file name of the binary that runs the daemon.
pub const DAEMON_BINARY: &str = "malo-daemon";

/// The subcommands `malo-daemon` runs.
pub const DAEMON_COMMANDS: [&str; 2] = ["daemon", "doctor"];

/// `malo-daemon`, beside the running binary.
pub fn daemon_binary() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|error| format!("cannot find the malo binary: {error}"))?;
    let daemon = me.with_file_name(DAEMON_BINARY);
    if daemon.is_file() {
        Ok(daemon)
    } else {
        Err(format!("{} is missing: malo runs its daemon from it, installed beside {}", daemon.display(), me.display()))
    }
}

/// Whether a command line (without the program name) is one for `malo-daemon`.
pub fn runs_in_daemon_binary(args: &[OsString]) -> bool {
    args.first().and_then(|command| command.to_str()).is_some_and(|command| DAEMON_COMMANDS.contains(&command))
}

/// Replaces this process with `malo-daemon` running `args` (its pid, its standard
/// streams, its limits); answers only if that failed, with why.
pub fn hand_over(args: &[OsString]) -> String {
    use std::os::unix::process::CommandExt;
    let daemon = match daemon_binary() {
        Ok(daemon) => daemon,
        Err(error) => return error,
    };
    let error = std::process::Command::new(&daemon).arg0("malo").args(args).exec();
    format!("cannot run {}: {error}", daemon.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_daemon_and_the_doctor_run_in_the_daemon_binary() {
        let line = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(runs_in_daemon_binary(&line(&["daemon", "--data-dir", "/tmp/x"])));
        assert!(runs_in_daemon_binary(&line(&["doctor"])));
        for other in [&["mcp"][..], &["navigate", "daemon"], &["--help"], &[]] {
            assert!(!runs_in_daemon_binary(&line(other)), "{other:?}");
        }
    }
}
