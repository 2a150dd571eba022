//! Third-party clients, unmodified: the npm packages `tests/clients/package.json` pins,
//! installed once from the registry into the build cache (a folder per version of that
//! file, so CI reuses it), and the client scripts of `tests/clients/` run with Node
//! against the product. Each script prints one JSON line per check.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// Where the pinned clients are installed (installing them on first use).
pub fn clients_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(install).clone()
}

fn install() -> PathBuf {
    let package = std::fs::read_to_string(super::repo_file("tests/clients/package.json")).expect("tests/clients/package.json");
    // FNV-1a of the package file: a new pin is a new folder.
    let hash = package.bytes().fold(0xcbf29ce484222325u64, |hash, byte| (hash ^ byte as u64).wrapping_mul(0x100000001b3));
    let cache = std::env::var_os("CARGO_TARGET_DIR")
        .map(|target| PathBuf::from(target).join("..").join("clients"))
        .unwrap_or_else(|| std::env::temp_dir().join("malo-clients"));
    let dir = cache.join(format!("{hash:016x}"));
    if dir.join("node_modules").join(".malo-complete").exists() {
        return dir;
    }
    let staging = cache.join(format!("staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("package.json"), &package).unwrap();
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"])
        .current_dir(&staging)
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .output()
        .expect("npm runs (Node.js and npm are installed by scripts/setup.sh)");
    assert!(output.status.success(), "npm install of the pinned clients failed: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::write(staging.join("node_modules").join(".malo-complete"), "").unwrap();
    if std::fs::rename(&staging, &dir).is_err() {
        // Another test run installed it meanwhile.
        let _ = std::fs::remove_dir_all(&staging);
    }
    dir
}

/// What a client script reported: each check by name, and everything it printed.
pub struct ClientRun {
    pub checks: Vec<(String, bool, Value)>,
    pub success: bool,
    pub output: String,
}

impl ClientRun {
    /// The JSON lines a benchmark script printed (`{"figure", "target", ...}`), and the
    /// names of their figures in the order first seen.
    pub fn figures(&self) -> (Vec<Value>, Vec<String>) {
        let lines: Vec<Value> = self.output.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).collect();
        let mut names: Vec<String> = Vec::new();
        for name in lines.iter().filter_map(|line| line["figure"].as_str()) {
            if !names.iter().any(|known| known == name) {
                names.push(name.to_string());
            }
        }
        (lines, names)
    }

    /// Asserts that every named check was reported and passed.
    pub fn assert_passed(&self, names: &[&str]) {
        for name in names {
            let found = self.checks.iter().find(|(check, _, _)| check == name);
            match found {
                Some((_, true, _)) => {}
                Some((_, false, seen)) => panic!("check {name:?} failed, seen {seen}\n{}", self.output),
                None => panic!("check {name:?} was never reported\n{}", self.output),
            }
        }
        let failed: Vec<&String> = self.checks.iter().filter(|(_, ok, _)| !ok).map(|(name, _, _)| name).collect();
        assert!(failed.is_empty() && self.success, "failed checks {failed:?}\n{}", self.output);
    }
}

/// Runs `tests/clients/<script>` with Node, from the clients' folder, with `args`. The
/// folder gets every script of `tests/clients` (they import each other).
pub fn run_client(script: &str, args: &[&str]) -> ClientRun {
    let dir = clients_dir();
    for entry in std::fs::read_dir(super::repo_file("tests/clients")).expect("tests/clients is readable").flatten() {
        if entry.path().extension().is_some_and(|extension| extension == "mjs") {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("the client scripts copy");
        }
    }
    let output = Command::new("node").arg(script).args(args).current_dir(&dir).output().expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let checks = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| Some((line["check"].as_str()?.to_string(), line["ok"].as_bool()?, line["seen"].clone())))
        .collect();
    ClientRun { checks, success: output.status.success(), output: format!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr)) }
}
