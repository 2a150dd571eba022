//! The command line for people and scripts: `malo lease`, `malo session new|list|close`,
//! and one subcommand per registry tool with flags generated from the tool's JSON Schema
//! (`malo snapshot -s <id> --format text`, `malo click -s <id> --ref e12`). It finds the
//! daemon through `broker.json` (starting one when none runs) and keeps its lease and
//! session tokens in `<data-dir>/cli.json` (mode 0600), so nobody copies tokens by hand.

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::client::{ensure_broker, ApiClient};
use crate::error::{Error, Result};
use crate::tools::{ToolDescription, ToolRegistry};

/// The agent id the CLI leases under.
const CLI_AGENT: &str = "cli";

/// What the CLI remembers between runs.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CliState {
    lease_id: Option<String>,
    endpoint: Option<String>,
    token: Option<String>,
    /// Session id -> session token, newest last.
    sessions: Vec<(String, String)>,
}

fn state_path(data_dir: &Path) -> PathBuf {
    data_dir.join("cli.json")
}

fn load(data_dir: &Path) -> CliState {
    std::fs::read(state_path(data_dir)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

fn save(data_dir: &Path, state: &CliState) -> Result<()> {
    let path = state_path(data_dir);
    let temporary = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&temporary);
    let text = serde_json::to_vec_pretty(state).map_err(|error| Error::internal(error.to_string()))?;
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().create_new(true).write(true).mode(0o600).open(&temporary)?;
        file.write_all(&text)?;
        std::fs::rename(&temporary, &path)
    };
    write().map_err(|error| Error::internal(format!("cannot save {}: {error}", path.display())))
}

/// The data-dir flag every CLI subcommand takes.
fn data_dir_arg() -> Arg {
    Arg::new("data-dir").long("data-dir").default_value("~/.malo-browser").help("The daemon's data directory")
}

/// The `lease` and `session` subcommands and one subcommand per tool.
pub fn commands(registry: &ToolRegistry) -> Vec<Command> {
    let mut commands = vec![
        Command::new("lease")
            .about("Take (or renew) the CLI's lease and print it")
            .arg(data_dir_arg()),
        Command::new("session")
            .about("Open, list and close sessions")
            .subcommand_required(true)
            .subcommand(
                Command::new("new")
                    .about("Open a session")
                    .arg(Arg::new("name").long("name"))
                    .arg(Arg::new("width").long("width").value_parser(clap::value_parser!(u32)))
                    .arg(Arg::new("height").long("height").value_parser(clap::value_parser!(u32)))
                    .arg(Arg::new("profile").long("profile"))
                    .arg(data_dir_arg()),
            )
            .subcommand(Command::new("list").about("List the CLI lease's sessions").arg(data_dir_arg()))
            .subcommand(Command::new("close").about("Close a session").arg(Arg::new("id").required(true)).arg(data_dir_arg())),
    ];
    commands.push(
        Command::new("credentials")
            .about("Store passwords in the OS keychain for `login {\"credential\": name}`; no API returns them")
            .subcommand_required(true)
            .subcommand(
                Command::new("add")
                    .about("Store a credential (asks for the password without echo)")
                    .arg(Arg::new("name").required(true))
                    .arg(Arg::new("origin").long("origin").required(true).help("e.g. https://example.com"))
                    .arg(Arg::new("username").long("username").required(true))
                    .arg(Arg::new("password-stdin").long("password-stdin").action(ArgAction::SetTrue).help("Read the password from standard input"))
                    .arg(data_dir_arg()),
            )
            .subcommand(Command::new("list").about("Names, origins and usernames (never passwords)").arg(data_dir_arg()))
            .subcommand(Command::new("remove").about("Remove a credential").arg(Arg::new("name").required(true)).arg(data_dir_arg())),
    );
    for tool in registry.catalogue() {
        commands.push(tool_command(&tool));
    }
    commands
}

fn credentials(matches: &ArgMatches) -> Result<String> {
    let (action, sub) = matches.subcommand().ok_or_else(|| Error::bad_request("use credentials add, list or remove"))?;
    let data_dir = crate::config::expand_home(sub.get_one::<String>("data-dir").map(String::as_str).unwrap_or("~/.malo-browser"))?;
    std::fs::create_dir_all(&data_dir).map_err(|error| Error::internal(error.to_string()))?;
    let vault = crate::vault::Vault::new(&data_dir);
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    match action {
        "add" => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            let password = if sub.get_flag("password-stdin") {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map_err(|error| Error::internal(error.to_string()))?;
                line.trim_end_matches(['\r', '\n']).to_string()
            } else {
                rpassword::prompt_password(format!("Password for {name}: ")).map_err(|error| Error::internal(error.to_string()))?
            };
            let info = vault.add(
                &name,
                sub.get_one::<String>("origin").map(String::as_str).unwrap_or(""),
                sub.get_one::<String>("username").map(String::as_str).unwrap_or(""),
                &password,
            )?;
            Ok(pretty(&json!(info)))
        }
        "list" => Ok(pretty(&json!({ "credentials": vault.list() }))),
        "remove" => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            vault.remove(&name)?;
            Ok(pretty(&json!({ "ok": true, "removed": name })))
        }
        _ => Err(Error::bad_request("use credentials add, list or remove")),
    }
}

/// How a schema property is read from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Integer,
    Number,
    Flag,
    Json,
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(|reference| reference.strip_prefix("#/$defs/")) {
        Some(name) => &root["$defs"][name],
        None => schema,
    }
}

fn kind_of(property: &Value, root: &Value) -> (Kind, Vec<String>) {
    let property = resolve(property, root);
    let choices: Vec<String> = property["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(|value| value.as_str().map(str::to_string)).collect())
        .or_else(|| {
            property["oneOf"].as_array().map(|options| {
                options.iter().filter_map(|option| option["const"].as_str().or(option["enum"][0].as_str()).map(str::to_string)).collect()
            })
        })
        .unwrap_or_default();
    if !choices.is_empty() {
        return (Kind::Text, choices);
    }
    let types: Vec<&str> = match &property["type"] {
        Value::String(single) => vec![single.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let kind = if types.contains(&"boolean") {
        Kind::Flag
    } else if types.contains(&"integer") {
        Kind::Integer
    } else if types.contains(&"number") {
        Kind::Number
    } else if types.contains(&"string") && !types.contains(&"array") {
        Kind::Text
    } else {
        Kind::Json
    };
    (kind, Vec::new())
}

fn tool_command(tool: &ToolDescription) -> Command {
    let schema = &tool.input_schema;
    let required: Vec<&str> = schema["required"].as_array().map(|names| names.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let mut command = Command::new(tool.name)
        .about(tool.description)
        .arg(Arg::new("session").short('s').long("session").help("Session id (default: the CLI's newest session)"))
        .arg(data_dir_arg());
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let (kind, choices) = kind_of(property, schema);
        let description = resolve(property, schema)["description"].as_str().or(property["description"].as_str()).unwrap_or("").to_string();
        let flag = name.replace('_', "-");
        let mut arg = Arg::new(name.clone()).long(flag).help(description).required(required.contains(&name.as_str()));
        arg = match kind {
            Kind::Flag => arg.action(ArgAction::Set).num_args(0..=1).default_missing_value("true").value_parser(clap::value_parser!(bool)),
            Kind::Integer => arg.value_parser(clap::value_parser!(i64)).value_name("N"),
            Kind::Number => arg.value_parser(clap::value_parser!(f64)).value_name("N"),
            Kind::Json => arg.value_name("JSON"),
            Kind::Text if !choices.is_empty() => arg.value_parser(clap::builder::PossibleValuesParser::new(choices)),
            Kind::Text => arg.value_name("TEXT"),
        };
        command = command.arg(arg);
    }
    command
}

/// Runs a CLI subcommand that `commands` defined; `None` when `name` is not one of them.
pub fn run(name: &str, matches: &ArgMatches, registry: &ToolRegistry) -> Option<Result<String>> {
    if name == "credentials" {
        return Some(credentials(matches));
    }
    let known = matches!(name, "lease" | "session") || registry.get(name).is_ok();
    if !known {
        return None;
    }
    Some(dispatch(name, matches, registry))
}

fn dispatch(name: &str, matches: &ArgMatches, registry: &ToolRegistry) -> Result<String> {
    let data_dir = match name {
        "session" => matches.subcommand().map(|(_, sub)| sub).unwrap_or(matches),
        _ => matches,
    }
    .get_one::<String>("data-dir")
    .map(String::as_str)
    .unwrap_or("~/.malo-browser");
    let data_dir = crate::config::expand_home(data_dir)?;
    let (mut state, lease) = connect(&data_dir)?;
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    match name {
        "lease" => {
            let listed = lease.call("GET", "/v1/sessions", None)?;
            Ok(pretty(&json!({ "lease_id": state.lease_id, "endpoint": state.endpoint, "agent_id": CLI_AGENT, "sessions": listed["sessions"] })))
        }
        "session" => match matches.subcommand() {
            Some(("new", sub)) => {
                let mut spec = Map::new();
                if let Some(name) = sub.get_one::<String>("name") {
                    spec.insert("name".into(), json!(name));
                }
                for key in ["width", "height"] {
                    if let Some(value) = sub.get_one::<u32>(key) {
                        spec.insert(key.into(), json!(value));
                    }
                }
                if let Some(profile) = sub.get_one::<String>("profile") {
                    spec.insert("profile".into(), json!(profile));
                }
                let mut created = lease.call("POST", "/v1/sessions", Some(&Value::Object(spec)))?;
                let id = created["session_id"].as_str().unwrap_or_default().to_string();
                let token = created["session_token"].as_str().unwrap_or_default().to_string();
                state.sessions.push((id, token));
                save(&data_dir, &state)?;
                if let Some(object) = created.as_object_mut() {
                    object.remove("session_token");
                }
                Ok(pretty(&created))
            }
            Some(("list", _)) => Ok(pretty(&lease.call("GET", "/v1/sessions", None)?)),
            Some(("close", sub)) => {
                let id = sub.get_one::<String>("id").cloned().unwrap_or_default();
                let closed = session_client(&state, &lease, Some(&id))?.1.call("DELETE", &format!("/v1/sessions/{id}"), None)?;
                state.sessions.retain(|(known, _)| known != &id);
                save(&data_dir, &state)?;
                Ok(pretty(&closed))
            }
            _ => Err(Error::bad_request("use session new, list or close")),
        },
        tool => {
            let description = registry.get(tool)?;
            let input = tool_input(&description.input_schema, matches)?;
            let (id, client) = session_client(&state, &lease, matches.get_one::<String>("session"))?;
            let answer = client.call("POST", &format!("/v1/sessions/{id}/tools/{tool}"), Some(&input))?;
            if tool == "close" {
                state.sessions.retain(|(known, _)| known != &id);
                save(&data_dir, &state)?;
            }
            let output: crate::tools::ToolOutput = serde_json::from_value(answer)
                .map_err(|error| Error::internal(format!("the daemon's answer is unreadable: {error}")))?;
            // The result as the tool gave it, with `tab` and `seq` beside its fields.
            let result = output.flattened();
            if tool == "snapshot" && result["format"] == "text" {
                return Ok(result["text"].as_str().unwrap_or("").trim_end().to_string());
            }
            if result.get("ok") == Some(&Value::Bool(false)) {
                return Err(Error::new(
                    crate::error::ErrorCode::AssertionFailed,
                    format!("{tool} did not pass:\n{}", pretty(&result)),
                ));
            }
            Ok(pretty(&result))
        }
    }
}

/// The daemon (started if needed) and the CLI's lease, renewed on every run.
fn connect(data_dir: &Path) -> Result<(CliState, ApiClient)> {
    let (_info, broker) = ensure_broker(data_dir)?;
    let mut state = load(data_dir);
    let grant = broker.call("POST", "/v1/leases", Some(&json!({ "agent_id": CLI_AGENT })))?;
    let lease_id = grant["lease_id"].as_str().map(str::to_string);
    if state.lease_id != lease_id {
        // A new lease: the sessions of an old one are gone.
        state.sessions.clear();
    }
    state.lease_id = lease_id;
    state.endpoint = grant["endpoint"].as_str().map(str::to_string);
    state.token = grant["token"].as_str().map(str::to_string);
    save(data_dir, &state)?;
    let lease = ApiClient::new(state.endpoint.as_deref().unwrap_or_default(), vec![("x-malo-lease-token", state.token.clone().unwrap_or_default())]);
    Ok((state, lease))
}

fn session_client(state: &CliState, lease: &ApiClient, wanted: Option<&String>) -> Result<(String, ApiClient)> {
    let found = match wanted {
        Some(id) => state.sessions.iter().find(|(known, _)| known == id),
        None => state.sessions.last(),
    };
    let (id, token) = found.ok_or_else(|| {
        Error::new(
            crate::error::ErrorCode::SessionNotFound,
            match wanted {
                Some(id) => format!("the CLI did not open session {id}; open one with `malo session new`"),
                None => "no session yet; open one with `malo session new`".to_string(),
            },
        )
    })?;
    Ok((id.clone(), lease.with_header("x-malo-session-token", token.clone())))
}

fn tool_input(schema: &Value, matches: &ArgMatches) -> Result<Value> {
    let mut input = BTreeMap::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let (kind, _) = kind_of(property, schema);
        let value = match kind {
            Kind::Flag => matches.get_one::<bool>(name).map(|flag| json!(flag)),
            Kind::Integer => matches.get_one::<i64>(name).map(|number| json!(number)),
            Kind::Number => matches.get_one::<f64>(name).map(|number| json!(number)),
            Kind::Text => matches.get_one::<String>(name).map(|text| json!(text)),
            Kind::Json => matches.get_one::<String>(name).map(|text| serde_json::from_str(text).unwrap_or_else(|_| json!(text))),
        };
        if let Some(value) = value {
            input.insert(name.clone(), value);
        }
    }
    Ok(json!(input))
}
