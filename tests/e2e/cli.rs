//! The CLI as a person or a coding agent types it (issue #31): positional arguments on a
//! fixture page, `@e12` refs, the default session opened on first use and ended by `malo
//! close`, the same text on a terminal and on a pipe (issue #43: a coding agent's shell
//! tool reads a pipe), JSON with `--json`, exit codes, shell completions, `malo skill`.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::harness::*;

/// Runs `malo args --data-dir <daemon's>` from `dir` with stdout on a pipe: exit code,
/// stdout, stderr.
fn piped(daemon: &Daemon, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = daemon.cli_output_in(dir, args);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).to_string();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

/// Runs the same on a pseudo-terminal (util-linux `script`), as a person's shell does:
/// exit code and everything the terminal showed (stdout and stderr), with `\n` line ends.
fn on_terminal(daemon: &Daemon, dir: &Path, args: &[&str]) -> (i32, String) {
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let mut line: Vec<String> = vec![quote(&malo_binary().display().to_string())];
    line.extend(args.iter().map(|word| quote(word)));
    line.extend(["--data-dir".to_string(), quote(&daemon.data_dir.display().to_string())]);
    let output = Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(dir)
        .env("DISPLAY", display())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n"))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
}

#[test]
fn page_commands_take_positional_arguments_and_open_a_session_of_their_own() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-positional");
    let run = |args: &[&str]| piped(&daemon, &dir.0, args);

    // No session yet: the first page command opens the CLI's own and says so, once.
    let (code, out, err) = run(&["navigate", &fixtures.url("/f/actions.html")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("malo: opened session sess-"), "{err}");
    assert_eq!(out, format!("actions\n200 {}\n", fixtures.url("/f/actions.html")), "a pipe gets text: the title, the status and URL");
    let (code, text, err) = run(&["snapshot"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("page: actions"), "a snapshot is its text form on a pipe: {text}");
    assert!(!err.contains("opened session"), "said once: {err}");
    let ref_of = |name: &str| text.lines().find(|line| line.contains(name)).unwrap().split(' ').next().unwrap().to_string();
    let (user, save) = (ref_of("textbox \"User name\""), ref_of("button \"Save\""));

    // fill <ref|selector> <text>, the ref written as @e12.
    let (code, out, err) = run(&["fill", &format!("@{user}"), "typed by position"]);
    assert_eq!((code, out.as_str()), (0, "ok\n"), "{err}");
    // click <ref|selector>; --json gives the daemon's JSON.
    let (code, out, err) = run(&["click", &save, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["target"]["name"], "Save");
    // select <ref|selector> <value>, eval <expression>.
    let (code, _, err) = run(&["select", "#color", "g"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["eval", "document.querySelector('#color').value"]);
    assert_eq!((code, out.as_str()), (0, "g\n"), "{err}");
    let (code, out, err) = run(&["extract", "#color", "--mode", "value"]);
    assert_eq!((code, out.as_str()), (0, "g\n"), "one match, not cut: the value alone: {err}");
    // press <key>, type <text>, on the focused field.
    for args in [&["click", "#user"][..], &["press", "End"], &["type", "!"]] {
        let (code, _, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let (_, out, _) = run(&["evaluate", "document.querySelector('#user').value", "--json"]);
    assert_eq!(json(&out)["value"], "typed by position!");
    // What the page logged, as lines.
    let (code, _, err) = run(&["eval", "console.log('said to the console')"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["console"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("said to the console") && !out.starts_with('{'), "{out}");
    // wait-for <text>; flags still work beside positionals.
    let (code, out, err) = run(&["wait-for", "Actions", "--timeout-ms", "5000", "--json"]);
    assert_eq!((code, json(&out)["ok"].clone()), (0, Value::Bool(true)), "{err}");
    let (code, _, err) = run(&["assert", "--selector", "#user", "--value", "typed by position!"]);
    assert_eq!(code, 0, "{err}");
    // screenshot -o FILE.
    let (code, out, err) = run(&["screenshot", "-o", "shot.png"]);
    assert_eq!(code, 0, "{err}");
    let written = dir.0.join("shot.png").display().to_string();
    assert!(out.starts_with(&format!("{written} (")) && out.ends_with(")\n") && out.contains('x'), "where it went, and its size: {out}");
    assert!(std::fs::read(dir.0.join("shot.png")).unwrap().starts_with(b"\x89PNG"));
    let (code, out, err) = run(&["screenshot", "-o", "again.png", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["output"].as_str().unwrap().ends_with("again.png"));

    // Errors keep their code and exit 1; a command line clap refuses exits 2.
    let (code, _, err) = run(&["click", "#nothing-here", "--timeout-ms", "300"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("E_NOT_FOUND"), "{err}");
    let (code, _, err) = run(&["navigate"]);
    assert_eq!(code, 2, "url is required: {err}");
    let (code, _, err) = run(&["click", "e3", "--selector", "#user"]);
    assert_eq!(code, 2, "a target given twice: {err}");

    // close ends the default session; then there is none to close, and the next page
    // command opens another.
    let (code, out, err) = run(&["close", "--json"]);
    assert_eq!((code, json(&out)["closed"].clone()), (0, Value::Bool(true)), "{err}");
    let (code, _, err) = run(&["close"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("E_SESSION_NOT_FOUND"), "{err}");
    let (code, _, err) = run(&["navigate", &fixtures.url("/f/hello.html")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("malo: opened session sess-"), "{err}");
    let (code, _, err) = run(&["close"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_terminal_gets_text_and_json_only_when_asked() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-terminal");
    let run = |args: &[&str]| on_terminal(&daemon, &dir.0, args);

    let (code, shown) = run(&["navigate", &fixtures.url("/f/actions.html")]);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("malo: opened session sess-"), "{shown}");
    assert!(shown.contains(&format!("actions\n200 {}", fixtures.url("/f/actions.html"))), "{shown}");
    // On a terminal a snapshot is its text form unless asked otherwise.
    let (code, shown) = run(&["snapshot"]);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.starts_with("page: actions"), "{shown}");
    let (code, shown) = run(&["click", "#save"]);
    assert_eq!((code, shown.trim()), (0, "ok"));
    let (code, shown) = run(&["eval", "document.title"]);
    assert_eq!((code, shown.trim()), (0, "actions"));
    let (code, shown) = run(&["eval", "document.title", "--json"]);
    assert_eq!((code, json(&shown)["value"].clone()), (0, Value::from("actions")));
    let (code, shown) = run(&["screenshot"]);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("mime_type: image/png") && shown.contains("-o FILE writes it"), "no base64 on a terminal: {shown}");
    let (code, shown) = run(&["click", "#nothing-here", "--timeout-ms", "300"]);
    assert_eq!(code, 1, "{shown}");
    assert!(shown.starts_with("E_NOT_FOUND"), "{shown}");
    let (code, shown) = run(&["close"]);
    assert_eq!(code, 0, "{shown}");
}

/// Runs `malo args` as written (no flag added) from `dir`, stdout on a pipe, killing it
/// after 30 s: exit code, stdout, stderr.
fn as_written(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(malo_binary())
        .args(args)
        .current_dir(dir)
        .env("DISPLAY", display())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if begun.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("malo {args:?} still runs after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).to_string();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

#[test]
fn global_flags_work_before_the_subcommand_too() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-global-flags");
    let data_dir = daemon.data_dir.display().to_string();
    let run = |args: &[&str]| as_written(&dir.0, args);

    // As people and scripts write it.
    let (code, out, err) = run(&["--data-dir", &data_dir, "--json", "navigate", &fixtures.url("/f/actions.html")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["title"], "actions", "{out}");
    let session = err.split("opened session ").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or_else(|| panic!("{err}"));
    // -s and --data-dir=… before, --json after; --session before a nested subcommand's name.
    let (code, out, err) = run(&["-s", session, &format!("--data-dir={data_dir}"), "eval", "document.title", "--json"]);
    assert_eq!((code, json(&out)["value"].clone()), (0, Value::from("actions")), "{err}");
    let (code, out, err) = run(&["--json", "session", "--data-dir", &data_dir, "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(session), "{out}");

    // The daemon binary's commands get them too: the doctor sees this daemon, and a
    // second daemon on its data directory refuses, naming it.
    let (code, out, err) = run(&["--data-dir", &data_dir, "--json", "doctor"]);
    assert_eq!(code, 0, "{out}{err}");
    let report = json(&out);
    let running = report["checks"].as_array().unwrap().iter().find(|check| check["name"] == "daemon").unwrap()["detail"].clone();
    assert!(running.as_str().unwrap().contains(&format!("pid {}", daemon.pid)), "{running}");
    let (code, _, err) = run(&["--data-dir", &data_dir, "daemon"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("already running") && err.contains(&data_dir), "{err}");

    // A flag a subcommand does not take is still a usage error, wherever it is written.
    let (code, _, err) = run(&["--json", "skill"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["--data-dir", &data_dir, "close"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn completions_load_in_bash_and_the_skill_is_short() {
    let dir = TempDir::new("cli-completions");
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(malo_binary()).args(["completions", shell]).output().unwrap();
        assert!(output.status.success() && output.stdout.len() > 1000, "{shell}: {}", String::from_utf8_lossy(&output.stderr));
        std::fs::write(dir.0.join(shell), &output.stdout).unwrap();
    }
    let script = format!("source {} && complete -p malo", dir.0.join("bash").display());
    let loaded = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(loaded.status.success() && loaded.stderr.is_empty(), "{}", String::from_utf8_lossy(&loaded.stderr));
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("malo"));

    let skill = Command::new(malo_binary()).arg("skill").output().unwrap();
    let text = String::from_utf8(skill.stdout).unwrap();
    assert!(skill.status.success() && text.starts_with("---\nname: malo-browser\n"), "{text}");
    for usage in ["malo navigate <url>", "malo click <ref|selector>", "malo fill <ref|selector> <text>", "malo eval <expression>"] {
        assert!(text.contains(usage), "{usage} missing:\n{text}");
    }
    // Tokens are counted in the unit test (o200k); words are a proxy here.
    assert!(text.split_whitespace().count() < 1000, "{text}");
}
