//! The command line for people, scripts and coding agents: `malo lease`, `malo session
//! new|list|close`, and one subcommand per registry tool, its flags generated from the
//! tool's JSON Schema and its positional arguments from the tool's presentation (`malo
//! navigate https://example.com`, `malo click @e12`, `malo fill e3 hello`). It finds the
//! daemon through `broker.json` (starting one when none runs), keeps its lease and session
//! tokens in `<data-dir>/cli.json` (mode 0600), and opens a session of its own when a page
//! command finds none, as `malo mcp` does. Also `malo skill` and `malo completions`.

mod args;
mod batch;
mod credentials;
mod find;
mod output;
mod policy;
mod skill;

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use self::output::Reader;
use crate::client::{ensure_broker, LeaseClient, SavedLease, SessionOptions};
use crate::config::DEFAULT_DATA_DIR;
use crate::error::{Error, ErrorCode, Result};
use crate::session::CreateSession;
use crate::tools::{ToolDescription, ToolRegistry};

pub use self::skill::skill;

/// The agent id the CLI leases under.
const CLI_AGENT: &str = "cli";

/// The name of the session the CLI opens by itself.
const DEFAULT_SESSION_NAME: &str = "cli";

/// The CLI's own flag of tools whose result holds a file: where to write it.
const OUTPUT_ARG: &str = "cli-output";

fn state_path(data_dir: &Path) -> PathBuf {
    data_dir.join("cli.json")
}

fn load(data_dir: &Path) -> SavedLease {
    std::fs::read(state_path(data_dir)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

/// Saves the lease for later runs, unless `earlier` (what was loaded) says the same.
fn save(data_dir: &Path, lease: &LeaseClient, broker_pid: Option<u32>, earlier: Option<&SavedLease>) -> Result<()> {
    let saved = SavedLease { broker_pid, ..lease.saved() };
    if earlier.is_some_and(|earlier| same(earlier, &saved)) {
        return Ok(());
    }
    let path = state_path(data_dir);
    let temporary = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&temporary);
    let text = serde_json::to_vec_pretty(&saved).map_err(|error| Error::internal(error.to_string()))?;
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().create_new(true).write(true).mode(0o600).open(&temporary)?;
        file.write_all(&text)?;
        std::fs::rename(&temporary, &path)
    };
    write().map_err(|error| Error::internal(format!("cannot save {}: {error}", path.display())))
}

fn same(one: &SavedLease, other: &SavedLease) -> bool {
    (&one.lease_id, &one.endpoint, &one.token, &one.sessions, one.broker_pid)
        == (&other.lease_id, &other.endpoint, &other.token, &other.sessions, other.broker_pid)
}

/// The data-dir flag every CLI subcommand takes.
fn data_dir_arg() -> Arg {
    Arg::new("data-dir").long("data-dir").default_value(DEFAULT_DATA_DIR).help("The daemon's data directory")
}

/// `--json`: JSON instead of text, on a terminal and on a pipe alike.
fn json_arg() -> Arg {
    Arg::new("json").long("json").action(ArgAction::SetTrue).help("Print the daemon's JSON instead of text")
}

/// The `lease`, `session`, `credentials`, `skill` and `completions` subcommands and one
/// subcommand per tool.
pub fn commands(registry: &ToolRegistry) -> Vec<Command> {
    let session_new = args::with_schema_args(
        Command::new("new").about("Open a session (its flags are POST /v1/sessions' fields)").arg(data_dir_arg()).arg(json_arg()),
        &crate::tools::schema_of::<CreateSession>(),
        &[],
    );
    let mut commands = vec![
        Command::new("lease").about("Take (or renew) the CLI's lease and print it").arg(data_dir_arg()).arg(json_arg()),
        Command::new("session")
            .about("Open, list and close sessions (`malo close` closes the current one)")
            .subcommand_required(true)
            .subcommand(session_new)
            .subcommand(Command::new("list").about("List the CLI lease's sessions").arg(data_dir_arg()).arg(json_arg()))
            .subcommand(
                Command::new("close").about("Close a session").arg(Arg::new("id").required(true)).arg(data_dir_arg()).arg(json_arg()),
            ),
        credentials::command(),
        policy::command(),
        Command::new("skill").about("Print a short guide to this CLI for coding agents (install it as a skill: see README)"),
        Command::new("completions")
            .about("Print shell completions: `source <(malo completions bash)`")
            .arg(Arg::new("shell").required(true).value_parser(clap::value_parser!(clap_complete::Shell))),
    ];
    for tool in registry.catalogue() {
        commands.push(tool_command(&tool));
    }
    commands.push(batch::command());
    commands
}

/// A tool's subcommand: generated from its schema, but `find`'s, which reads a locator and
/// an action word (`malo find role button --name Save click`).
fn tool_command(tool: &ToolDescription) -> Command {
    match tool.name {
        "find" => find::command(tool),
        _ => args::tool_command(tool),
    }
}

/// [`commands`], or only the tool subcommand `first` (the command line's first word)
/// names: a tool call's parser need not build the other sixty.
pub fn commands_for(registry: &ToolRegistry, first: Option<&str>) -> Vec<Command> {
    let named = |tool: &ToolDescription| {
        first.is_some_and(|word| word == tool.name || word == tool.name.replace('_', "-") || Some(word) == tool.presentation.cli_alias)
    };
    match registry.catalogue().into_iter().find(named) {
        Some(tool) => vec![tool_command(&tool)],
        None => commands(registry),
    }
}

/// Runs a CLI subcommand that `commands` defined; `None` when `name` is not one of them.
/// `command_line` is the whole command line's definition (for completions).
pub fn run(name: &str, matches: &ArgMatches, registry: &ToolRegistry, command_line: &Command) -> Option<Result<String>> {
    match name {
        "credentials" => return Some(credentials::run(matches)),
        "policy" => return Some(policy::run(matches)),
        "skill" => return Some(Ok(skill(registry))),
        "completions" => return Some(Ok(completions(matches, command_line))),
        _ => {}
    }
    let tool = registry.describe(&name.replace('-', "_"));
    if !matches!(name, "lease" | "session" | "batch") && tool.is_none() {
        return None;
    }
    Some(dispatch(name, matches, tool.as_ref(), registry))
}

/// Completions of the whole command line for `shell`.
fn completions(matches: &ArgMatches, command_line: &Command) -> String {
    let shell = matches.get_one::<clap_complete::Shell>("shell").copied().unwrap_or(clap_complete::Shell::Bash);
    let mut command = command_line.clone();
    let mut written = Vec::new();
    clap_complete::generate(shell, &mut command, "malo", &mut written);
    String::from_utf8_lossy(&written).trim_end().to_string()
}

fn dispatch(name: &str, matches: &ArgMatches, tool: Option<&ToolDescription>, registry: &ToolRegistry) -> Result<String> {
    let own = match name {
        "session" => matches.subcommand().map(|(_, sub)| sub).unwrap_or(matches),
        _ => matches,
    };
    let data_dir = crate::config::expand_home(own.get_one::<String>("data-dir").map(String::as_str).unwrap_or(DEFAULT_DATA_DIR))?;
    let reader = Reader::of(own.get_flag("json"));
    // `-o FILE` never writes into the daemon's data directory (the person's policy is there).
    if let Some(file) = matches.try_get_one::<String>(OUTPUT_ARG).ok().flatten() {
        if crate::policy::inside_data_dir(&data_dir, Path::new(file), None) {
            return Err(Error::bad_request(format!("-o {file} is inside the daemon's data directory: write the file elsewhere")));
        }
    }
    if let Some(tool) = tool {
        // The lease and session an earlier run saved, while the daemon that granted them
        // runs: one request, no broker round trips.
        let saved = load(&data_dir);
        if let Some(lease) = resumable(&data_dir, &saved) {
            match call_tool(&lease, registry, tool, matches, reader) {
                Err(error) if stale(&error) => {}
                printed => {
                    save(&data_dir, &lease, saved.broker_pid, Some(&saved))?;
                    return printed;
                }
            }
        }
        let (lease, pid) = connect(&data_dir)?;
        let printed = call_tool(&lease, registry, tool, matches, reader);
        save(&data_dir, &lease, Some(pid), None)?;
        return printed;
    }
    if name == "batch" {
        // The daemon is found once, and one lease client (one kept-alive connection)
        // serves every command of the batch.
        let saved = load(&data_dir);
        let (lease, pid) = match resumable(&data_dir, &saved).filter(|lease| lease.list_sessions().is_ok()) {
            Some(lease) => (lease, saved.broker_pid),
            None => connect(&data_dir).map(|(lease, pid)| (lease, Some(pid)))?,
        };
        let printed = batch::run(&lease, registry, matches);
        save(&data_dir, &lease, pid, None)?;
        return printed;
    }
    let (lease, pid) = connect(&data_dir)?;
    let answer = match name {
        "lease" => {
            let listed = lease.list_sessions()?;
            json!({ "lease_id": lease.lease_id, "endpoint": lease.endpoint, "agent_id": CLI_AGENT, "sessions": listed["sessions"] })
        }
        _ => match matches.subcommand() {
            Some(("new", sub)) => {
                let spec = args::tool_input(&crate::tools::schema_of::<CreateSession>(), &[], sub)?;
                lease.open_session(&spec)?
            }
            Some(("list", _)) => lease.list_sessions()?,
            Some(("close", sub)) => lease.close_session(sub.get_one::<String>("id").map(String::as_str).unwrap_or_default())?,
            _ => return Err(Error::bad_request("use session new, list or close")),
        },
    };
    save(&data_dir, &lease, Some(pid), None)?;
    Ok(reader.answer(&answer))
}

/// Runs one tool on the session the command names, else on the CLI's default session
/// (opened now when there is none, except for a call that would only end it).
fn call_tool(lease: &LeaseClient, registry: &ToolRegistry, tool: &ToolDescription, matches: &ArgMatches, reader: Reader) -> Result<String> {
    let (tool, input) = tool_call(registry, tool, matches, reader)?;
    let named = matches.get_one::<String>("session").cloned();
    let output = run_tool(lease, &tool, &input, named.as_deref())?;
    let file = matches.try_get_one::<String>(OUTPUT_ARG).ok().flatten().map(Path::new);
    reader.tool_result(&tool, output.flattened(), file)
}

/// The tool a command line calls (`find` with an action word calls the action's) and its
/// input, from the command's flags and positional words.
fn tool_call(registry: &ToolRegistry, tool: &ToolDescription, matches: &ArgMatches, reader: Reader) -> Result<(ToolDescription, Value)> {
    if tool.name == "find" {
        return find::call(registry, matches);
    }
    let mut input = args::tool_input(&tool.input_schema, tool.presentation.positional, matches)?;
    args::absolute_paths(tool.presentation.local_paths, &mut input)?;
    if let Some(fields) = input.as_object_mut().filter(|_| reader == Reader::Text) {
        crate::tools::apply_defaults(tool.presentation.cli_defaults, fields);
    }
    // Lists of the page the agent is on, on a terminal and on a pipe alike.
    if let Some(fields) = input.as_object_mut() {
        crate::tools::apply_current_page(&tool.presentation, fields);
    }
    // `malo init-script remove 3`: the word after `remove` is the script's id.
    if tool.name == "init_script" && input["action"] == "remove" && input.get("id").is_none() {
        if let Some(word) = input.as_object_mut().and_then(|fields| fields.remove("path")) {
            input["id"] = word;
        }
    }
    Ok((tool.clone(), input))
}

/// Calls `tool` with `input` on session `named`, else on the CLI's default session (opened
/// now when there is none, except for a call that would only end it).
fn run_tool(lease: &LeaseClient, tool: &ToolDescription, input: &Value, named: Option<&str>) -> Result<crate::tools::ToolOutput> {
    let spec = SessionOptions::default().spec(DEFAULT_SESSION_NAME);
    let open = !tool.presentation.ends_session;
    let (session, opened) = match named {
        Some(session) => (session.to_string(), false),
        None => lease.default_session(&spec, open)?,
    };
    if opened {
        announce(&session, None);
    }
    match lease.call_tool(&session, tool.name, input) {
        // The default session went away (closed when idle, or the daemon restarted): a
        // new one takes its place, and the person is told.
        Err(error) if error.code == ErrorCode::SessionNotFound && named.is_none() && !opened && open => {
            lease.forget_session(&session);
            let (fresh, _) = lease.default_session(&spec, true)?;
            announce(&fresh, Some(&session));
            lease.call_tool(&fresh, tool.name, input)
        }
        other => other,
    }
}

/// Says on stderr that the CLI opened its default session (once: on the run that opens it).
fn announce(session: &str, replaced: Option<&str>) {
    match replaced {
        Some(gone) => eprintln!("malo: session {gone} is gone; opened session {session} (`malo close` closes it)"),
        None => eprintln!("malo: opened session {session} (`malo close` closes it)"),
    }
}

/// The daemon (started if needed) and the CLI's lease, renewed, with the sessions an
/// earlier run opened under it; and the daemon's pid.
fn connect(data_dir: &Path) -> Result<(LeaseClient, u32)> {
    let (info, broker) = ensure_broker(data_dir)?;
    let lease = LeaseClient::take(&broker, CLI_AGENT)?;
    lease.adopt(&load(data_dir));
    save(data_dir, &lease, Some(info.pid), None)?;
    Ok((lease, info.pid))
}

/// The saved lease, when the daemon that granted it still runs (its pid is still in
/// `broker.json` and alive).
fn resumable(data_dir: &Path, saved: &SavedLease) -> Option<LeaseClient> {
    let pid = saved.broker_pid?;
    let info = crate::broker::instance::read_broker_file(&data_dir.join("broker.json"))?;
    // Where there is no /proc, never: the broker is asked.
    let alive = info.pid == pid && Path::new(&format!("/proc/{pid}")).exists();
    if !alive || saved.sessions.is_empty() {
        return None;
    }
    LeaseClient::resume(saved)
}

/// Whether a call on a saved lease failed because the lease is gone (expired, or another
/// daemon's port): nothing ran, and the call goes again through the broker.
fn stale(error: &Error) -> bool {
    matches!(error.code, ErrorCode::LeaseNotFound | ErrorCode::Unauthorized | ErrorCode::ShuttingDown) || error.details["refused"] == true
}
