//! The web-process sandbox: WebKit's bubblewrap + seccomp jail around every web process
//! (`webkit_web_context_set_sandbox_enabled`). Whether this machine can run it is decided
//! once per daemon, by running bwrap the way WebKit will run it; every WebKit context the
//! daemon builds then follows that one answer ([`enabled`]).
//!
//! The probe matters because WebKit does not fail gently: with the sandbox on and
//! `/usr/bin/bwrap` missing (the path is compiled into WebKit; PATH plays no part), the
//! whole daemon aborts at the first web process (measured, `research/webkit` q3).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where WebKit runs bubblewrap from (compiled into WebKitGTK).
const WEBKIT_BWRAP: &str = "/usr/bin/bwrap";
/// Where WebKit runs the D-Bus proxy of its web processes from (compiled in too).
const WEBKIT_DBUS_PROXY: &str = "/usr/bin/xdg-dbus-proxy";
/// With this set (to anything), WebKit ignores `set_sandbox_enabled`.
const WEBKIT_DISABLE: &str = "WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS";
/// A test and diagnostic knob: the bwrap the probe runs instead of `/usr/bin/bwrap`
/// (e.g. `/nonexistent`, to see the daemon without a sandbox). WebKit itself always
/// runs `/usr/bin/bwrap`, so this can only turn the sandbox off, never on.
pub const BWRAP_ENV: &str = "MALO_BWRAP";
/// How long bwrap may take to build and leave its sandbox (it takes about 12 ms): a bwrap
/// that hangs (a stuck mount, a wrapper waiting on something) must not hold the daemon.
const PROBE_LIMIT: Duration = Duration::from_secs(3);
/// `MALO_REQUIRE_SANDBOX=1` does what `malo daemon --require-sandbox` does (for daemons
/// the CLI and `malo mcp` start).
pub const REQUIRE_ENV: &str = "MALO_REQUIRE_SANDBOX";

/// Whether web processes run sandboxed, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    On,
    Off(String),
}

impl Verdict {
    /// The daemon's one line about it.
    pub fn describe(&self) -> String {
        match self {
            Verdict::On if running_as_root() => {
                "web processes run sandboxed (bubblewrap + seccomp; as root they keep root's capabilities inside it: run malo as a normal user)"
                    .to_string()
            }
            Verdict::On => "web processes run sandboxed (bubblewrap + seccomp, no home directory)".to_string(),
            Verdict::Off(reason) => format!("web processes run WITHOUT a sandbox: {reason}"),
        }
    }
}

/// A probe under way: bwrap building a sandbox like WebKit's around `true`. It runs while
/// the daemon opens its screen and GTK, so it costs the first navigate nothing.
pub struct Probe {
    started: Instant,
    run: Option<Result<Child, String>>,
    answer: Option<(Verdict, Duration)>,
}

impl Probe {
    /// Starts the probe (a child process; no thread).
    pub fn start() -> Probe {
        let started = Instant::now();
        let bwrap = std::env::var_os(BWRAP_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(WEBKIT_BWRAP));
        Probe { started, run: Some(precondition(&bwrap).and_then(|()| spawn(&bwrap))), answer: None }
    }

    /// Waits for the probe (normally long finished) and answers, with how long the caller
    /// was held up waiting for it. Asked again, it answers the same.
    pub fn finish(&mut self) -> (Verdict, Duration) {
        if let Some(answer) = &self.answer {
            return answer.clone();
        }
        let waiting = Instant::now();
        let verdict = match self.run.take().expect("a probe runs once") {
            Err(reason) => Verdict::Off(reason),
            Ok(child) => judge(child, self.started + PROBE_LIMIT),
        };
        tracing::debug!(since_start_ms = self.started.elapsed().as_millis() as u64, "sandbox probe answered");
        self.answer.insert((verdict, waiting.elapsed())).clone()
    }
}

/// What bwrap's run says, waiting for it until `deadline` (then it is killed).
fn judge(mut child: Child, deadline: Instant) -> Verdict {
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Verdict::Off(format!("bubblewrap did not finish building a sandbox within {} s", PROBE_LIMIT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(error) => return Verdict::Off(format!("bubblewrap could not be run: {error}")),
        }
    };
    if status.success() {
        return Verdict::On;
    }
    let mut said = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        use std::io::Read;
        // It has exited: what it wrote is all there, and the pipe ends.
        let _ = stderr.read_to_string(&mut said);
    }
    let said = said.lines().next().unwrap_or("").trim();
    Verdict::Off(format!(
        "bubblewrap cannot build a sandbox here ({status}: {said}); are user namespaces off? (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)"
    ))
}

/// What must hold before bwrap is worth running.
fn precondition(bwrap: &Path) -> Result<(), String> {
    if std::env::var_os(WEBKIT_DISABLE).is_some() {
        return Err(format!("{WEBKIT_DISABLE} is set, and WebKit then ignores the sandbox"));
    }
    for (path, package) in
        [(bwrap, "bubblewrap"), (Path::new(WEBKIT_BWRAP), "bubblewrap"), (Path::new(WEBKIT_DBUS_PROXY), "xdg-dbus-proxy")]
    {
        if !is_executable(path) {
            return Err(format!("{} is missing (install {package})", path.display()));
        }
    }
    Ok(())
}

/// bwrap with the namespaces WebKit asks for (user namespace as bwrap itself decides:
/// unprivileged bwrap always makes one).
fn spawn(bwrap: &Path) -> Result<Child, String> {
    Command::new(bwrap)
        .args(["--die-with-parent", "--unshare-pid", "--unshare-uts", "--unshare-ipc", "--unshare-net"])
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("{} could not be run: {error}", bwrap.display()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

static VERDICT: OnceLock<Verdict> = OnceLock::new();

/// Records the daemon's answer; the first one stands (WebKit cannot change a context's
/// sandbox after its first web process, so neither does the daemon).
pub fn settle(verdict: Verdict) {
    let _ = VERDICT.set(verdict);
}

/// Whether the daemon's web processes run sandboxed (false until [`settle`]d).
pub fn enabled() -> bool {
    VERDICT.get() == Some(&Verdict::On)
}

/// Whether `--require-sandbox` is asked through the environment.
pub fn required_by_env() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false" | "no" | "off"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_bwrap_turns_the_sandbox_off_with_its_path() {
        let mut probe = Probe {
            started: Instant::now(),
            run: Some(precondition(Path::new("/nonexistent/bwrap")).map(|()| unreachable!())),
            answer: None,
        };
        let (verdict, _) = probe.finish();
        let Verdict::Off(reason) = verdict else { panic!("a missing bwrap cannot sandbox") };
        assert!(reason.contains("/nonexistent/bwrap is missing (install bubblewrap)"), "{reason}");
    }

    #[test]
    fn a_failing_bwrap_says_what_it_printed() {
        // A shell stands in for a bwrap that cannot make namespaces.
        let child = Command::new("sh")
            .args(["-c", "echo 'bwrap: No permissions to create a new namespace' >&2; exit 1"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut probe = Probe { started: Instant::now(), run: Some(Ok(child)), answer: None };
        let Verdict::Off(reason) = probe.finish().0 else { panic!("a failing bwrap cannot sandbox") };
        assert!(reason.contains("No permissions to create a new namespace"), "{reason}");
        assert_eq!(probe.finish().0, Verdict::Off(reason), "asked again, the same answer");
    }

    #[test]
    fn a_bwrap_that_hangs_is_killed_and_turns_the_sandbox_off() {
        let child = Command::new("sh").args(["-c", "exec sleep 30"]).stderr(Stdio::piped()).spawn().unwrap();
        let pid = child.id();
        let begun = Instant::now();
        let Verdict::Off(reason) = judge(child, Instant::now() + Duration::from_millis(200)) else { panic!("a hung bwrap cannot sandbox") };
        assert!(reason.contains("did not finish building a sandbox"), "{reason}");
        assert!(begun.elapsed() < Duration::from_secs(5), "it waited {:?}", begun.elapsed());
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the hung bwrap is gone");
    }

    #[test]
    fn a_bwrap_that_succeeds_turns_the_sandbox_on() {
        let child = Command::new("true").stderr(Stdio::piped()).spawn().unwrap();
        assert_eq!(judge(child, Instant::now() + PROBE_LIMIT), Verdict::On);
    }
}
