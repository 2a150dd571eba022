//! The words of a command line before clap reads them. People and scripts write global
//! flags first (`malo --data-dir X --json navigate …`); clap takes a subcommand's flags
//! only after it. So the global flags written before the subcommand are moved after it,
//! after the deepest subcommand the words name (`malo --json session list` reads as `malo
//! session list --json`), for both binaries: `malo` (which hands `daemon` and `doctor`
//! over with the words already in place) and `malo-daemon`.

use std::ffi::OsString;

use clap::Command;

/// Global flags that take a value (as the next word, or after `=`).
const WITH_VALUE: [&str; 3] = ["--data-dir", "--session", "-s"];

/// Global flags that take none.
const SWITCHES: [&str; 1] = ["--json"];

/// The flags this module moves, for help texts.
pub const GLOBAL_FLAGS: &str = "--data-dir, --json and -s/--session";

/// How many words the global flag at the start of `words` takes: 0 when it is none (or
/// misses its value, which clap then reports).
fn global_flag(words: &[OsString]) -> usize {
    let Some(word) = words.first().and_then(|word| word.to_str()) else { return 0 };
    if SWITCHES.contains(&word) {
        return 1;
    }
    if WITH_VALUE.contains(&word) {
        return if words.len() > 1 { 2 } else { 0 };
    }
    let attached = WITH_VALUE.iter().any(|flag| word.strip_prefix(flag).is_some_and(|rest| rest.starts_with('=')));
    // `-sVALUE`, as clap reads a short flag's value.
    let short = word.len() > 2 && word.starts_with("-s");
    usize::from(attached || short)
}

/// `args` (without the program's name) with the global flags written before a subcommand
/// (or between a subcommand and its own subcommand) moved after the deepest subcommand
/// they precede. Words after that subcommand, and a line naming no subcommand, are left
/// as they are, for clap to read or refuse.
pub fn global_flags_after_subcommand(args: &[OsString], command: &Command) -> Vec<OsString> {
    let mut path: Vec<OsString> = Vec::new();
    let mut flags: Vec<OsString> = Vec::new();
    let mut current = command;
    let mut index = 0;
    while index < args.len() && current.has_subcommands() {
        let taken = global_flag(&args[index..]);
        if taken > 0 {
            flags.extend_from_slice(&args[index..index + taken]);
            index += taken;
            continue;
        }
        match current.find_subcommand(&args[index]) {
            Some(subcommand) => {
                path.push(args[index].clone());
                current = subcommand;
                index += 1;
            }
            None => break,
        }
    }
    if flags.is_empty() || path.is_empty() {
        return args.to_vec();
    }
    path.extend(flags);
    path.extend_from_slice(&args[index..]);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> Command {
        let leaf = |name: &'static str| Command::new(name).arg(clap::Arg::new("data-dir").long("data-dir"));
        Command::new("malo")
            .subcommand(leaf("navigate"))
            .subcommand(leaf("daemon"))
            .subcommand(Command::new("session").subcommand(leaf("list")).subcommand(leaf("new")))
    }

    fn moved(words: &[&str]) -> Vec<String> {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        global_flags_after_subcommand(&args, &command()).into_iter().map(|word| word.into_string().unwrap()).collect()
    }

    #[test]
    fn global_flags_before_the_subcommand_move_after_it() {
        assert_eq!(
            moved(&["--data-dir", "/x", "--json", "navigate", "https://a.test"]),
            ["navigate", "--data-dir", "/x", "--json", "https://a.test"]
        );
        assert_eq!(moved(&["--data-dir=/x", "-s", "sess-1", "navigate", "u"]), ["navigate", "--data-dir=/x", "-s", "sess-1", "u"]);
        assert_eq!(moved(&["-ssess-1", "--session=sess-2", "navigate"]), ["navigate", "-ssess-1", "--session=sess-2"]);
        assert_eq!(moved(&["--json", "session", "--data-dir", "/x", "list"]), ["session", "list", "--json", "--data-dir", "/x"]);
        assert_eq!(moved(&["--data-dir", "/x", "daemon", "--port", "1"]), ["daemon", "--data-dir", "/x", "--port", "1"]);
    }

    #[test]
    fn other_lines_are_left_for_clap() {
        for line in [
            &["navigate", "--json", "-s", "x"][..],
            &["navigate", "--", "--json"],
            &["--json"],
            &["--json", "--help"],
            &["--json", "unknown", "x"],
            &["--data-dir"],
            &["--version"],
            &[],
        ] {
            assert_eq!(moved(line), line.to_vec(), "{line:?}");
        }
        // Words after the subcommand are its own, even those that look like global flags.
        assert_eq!(moved(&["--json", "navigate", "--", "-s"]), ["navigate", "--json", "--", "-s"]);
    }
}
