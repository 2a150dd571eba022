//! `malo batch`: many commands in one process, over one lease and one kept-alive
//! connection (the daemon is found once, not per command). The commands come as arguments
//! (`malo batch "open http://..." "click #b"`) or on stdin, one per line, each written as
//! it would be after `malo` (`eval "document.title"`), with a shell's quoting. Each prints
//! one JSON line: the command, `ok`, and its result or its error. `--bail` stops at the
//! first failure.

use std::io::{BufRead, Write};

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use crate::client::LeaseClient;
use crate::error::{Error, ErrorCode, Result};
use crate::tools::{ToolDescription, ToolRegistry};

/// Commands a batch runs at most.
const MAX_COMMANDS: usize = 10_000;

/// `batch`'s subcommand.
pub(super) fn command() -> Command {
    Command::new("batch")
        .about("Run many commands in one process: as arguments or one per line on stdin; prints a JSON line per command")
        .long_about(
            "Run many commands in one process, over one connection to the daemon: as arguments \
             (malo batch \"navigate https://example.com\" \"click #go\") or on stdin, one per line, each written as after \
             `malo` (eval \"document.title\"), with a shell's quoting; blank lines and lines starting with # are skipped. \
             Prints one JSON line per command: {command, ok, result} or {command, ok: false, error}. --bail stops at the \
             first failure; the exit status is 1 when any command failed.",
        )
        .override_usage("malo batch [OPTIONS] [COMMAND]...\n       malo batch [OPTIONS] < commands.txt")
        .arg(Arg::new("commands").num_args(0..).value_name("COMMAND").help("The commands, each one argument (else stdin's lines)"))
        .arg(Arg::new("bail").long("bail").action(ArgAction::SetTrue).help("Stop at the first command that fails"))
        .arg(
            Arg::new("session")
                .short('s')
                .long("session")
                .help("Session id for every command that names none (default: the CLI's newest session)"),
        )
        .arg(super::data_dir_arg())
        .arg(super::json_arg().help("Accepted for symmetry: a batch always prints JSON lines"))
}

/// The commands of a batch: its arguments, else stdin's lines.
fn commands(matches: &ArgMatches) -> Result<Vec<String>> {
    let given: Vec<String> = matches.get_many::<String>("commands").map(|words| words.cloned().collect()).unwrap_or_default();
    let lines = if given.is_empty() {
        let mut lines = Vec::new();
        for line in std::io::stdin().lock().lines() {
            lines.push(line.map_err(|error| Error::bad_request(format!("batch: cannot read stdin: {error}")))?);
        }
        lines
    } else {
        given
    };
    let lines: Vec<String> = lines.into_iter().filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#')).collect();
    if lines.len() > MAX_COMMANDS {
        return Err(Error::bad_request(format!("batch: {} commands; at most {MAX_COMMANDS} in one batch", lines.len())));
    }
    Ok(lines)
}

/// Runs a batch on `lease`: one JSON line per command on stdout as each ends. Answers the
/// last line (which the caller prints), or the error that ends the batch.
pub(super) fn run(lease: &LeaseClient, registry: &ToolRegistry, matches: &ArgMatches) -> Result<String> {
    let lines = commands(matches)?;
    let session = matches.get_one::<String>("session").cloned();
    let bail = matches.get_flag("bail");
    let mut stdout = std::io::stdout().lock();
    let (mut failed, mut last) = (0usize, None::<String>);
    let total = lines.len();
    for (index, line) in lines.iter().enumerate() {
        if let Some(previous) = last.take() {
            let _ = writeln!(stdout, "{previous}");
            let _ = stdout.flush();
        }
        let answer = match one(lease, registry, line, session.as_deref()) {
            Ok(result) => json!({ "command": line, "ok": true, "result": result }),
            Err(error) => {
                failed += 1;
                json!({ "command": line, "ok": false, "error": { "code": error.code.as_str(), "message": error.message, "details": error.details } })
            }
        };
        last = Some(answer.to_string());
        if failed > 0 && bail {
            let _ = writeln!(stdout, "{}", last.take().unwrap_or_default());
            let _ = stdout.flush();
            return Err(Error::new(ErrorCode::BadRequest, format!("batch: command {} of {total} failed; stopped (--bail)", index + 1)));
        }
    }
    if failed > 0 {
        let _ = writeln!(stdout, "{}", last.take().unwrap_or_default());
        let _ = stdout.flush();
        return Err(Error::new(ErrorCode::BadRequest, format!("batch: {failed} of {total} commands failed")));
    }
    Ok(last.unwrap_or_default())
}

/// Runs one command line of a batch; answers its result (with `tab` and `seq`).
fn one(lease: &LeaseClient, registry: &ToolRegistry, line: &str, session: Option<&str>) -> Result<Value> {
    let mut words = split_words(line)?;
    if words.first().map(String::as_str) == Some("malo") {
        words.remove(0);
    }
    let Some(first) = words.first().cloned() else { return Err(Error::bad_request("batch: an empty command")) };
    let tool = registry
        .catalogue()
        .into_iter()
        .find(|tool| first == tool.name || first == tool.name.replace('_', "-") || Some(first.as_str()) == tool.presentation.cli_alias)
        .ok_or_else(|| Error::bad_request(format!("batch: {first:?} is not a tool command (batch runs page and session tools)")))?;
    let command = if tool.name == "find" { super::find::command(&tool) } else { super::args::tool_command(&tool) };
    let matches = command.no_binary_name(true).try_get_matches_from(&words[1..]).map_err(|error| {
        Error::bad_request(format!("{first}: {}", error.render().to_string().lines().next().unwrap_or("").trim_start_matches("error: ")))
    })?;
    let named = matches.get_one::<String>("session").cloned().or(session.map(str::to_string));
    let (tool, input): (ToolDescription, Value) = super::tool_call(registry, &tool, &matches, super::output::Reader::Json)?;
    Ok(super::run_tool(lease, &tool, &input, named.as_deref())?.flattened())
}

/// A command line's words, as a POSIX shell splits them: blanks separate words; single
/// quotes keep everything; double quotes keep all but `\"`, `\\`, `\$` and `` \` ``;
/// a backslash outside quotes keeps the next character. No expansions.
pub(super) fn split_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            ' ' | '\t' | '\r' | '\n' => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match characters.next() {
                        Some('\'') => break,
                        Some(kept) => current.push(kept),
                        None => return Err(Error::bad_request(format!("batch: unclosed ' in {line:?}"))),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match characters.next() {
                        Some('"') => break,
                        Some('\\') => match characters.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => current.push(escaped),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => return Err(Error::bad_request(format!("batch: unclosed \" in {line:?}"))),
                        },
                        Some(kept) => current.push(kept),
                        None => return Err(Error::bad_request(format!("batch: unclosed \" in {line:?}"))),
                    }
                }
            }
            '\\' => {
                let current = word.get_or_insert_with(String::new);
                if let Some(next) = characters.next() {
                    current.push(next);
                }
            }
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    if let Some(done) = word {
        words.push(done);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_as_a_shell_splits_them() {
        let split = |line: &str| split_words(line).unwrap();
        assert_eq!(split(r#"eval "document.title""#), ["eval", "document.title"]);
        assert_eq!(split("fill  e3 'it''s'  "), ["fill", "e3", "its"]);
        assert_eq!(split(r#"fill e3 "say \"hi\" \n""#), ["fill", "e3", r#"say "hi" \n"#]);
        assert_eq!(split(r"click a\ b ''"), ["click", "a b", ""]);
        assert_eq!(split("   "), Vec::<String>::new());
        assert!(split_words("eval 'open").is_err());
        assert!(split_words("eval \"open").is_err());
    }

    #[test]
    fn each_command_parses_against_its_tools_command_line() {
        let registry = ToolRegistry::standard();
        let click = registry.describe("click").unwrap();
        let words = split_words("click '#save' --timeout-ms 10").unwrap();
        let matches = crate::cli::args::tool_command(&click).no_binary_name(true).try_get_matches_from(&words[1..]).unwrap();
        let (tool, input) = crate::cli::tool_call(&registry, &click, &matches, crate::cli::output::Reader::Json).unwrap();
        assert_eq!((tool.name, input), ("click", json!({ "selector": "#save", "timeout_ms": 10 })));
    }
}
