//! The command line for people and scripts: `malo lease`, `malo session new|list|close`,
//! and one subcommand per registry tool with flags generated from the tool's JSON Schema
//! (`malo snapshot -s <id> --format text`, `malo click -s <id> --ref e12`). It finds the
//! daemon through `broker.json` (starting one when none runs) and keeps its lease and
//! session tokens in `<data-dir>/cli.json` (mode 0600), so nobody copies tokens by hand.

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use crate::client::{ensure_broker, LeaseClient, SavedLease};
use crate::config::DEFAULT_DATA_DIR;
use crate::error::{Error, Result};
use crate::session::CreateSession;
use crate::tools::{ToolDescription, ToolRegistry};

/// The agent id the CLI leases under.
const CLI_AGENT: &str = "cli";

fn state_path(data_dir: &Path) -> PathBuf {
    data_dir.join("cli.json")
}

fn load(data_dir: &Path) -> SavedLease {
    std::fs::read(state_path(data_dir)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

fn save(data_dir: &Path, lease: &LeaseClient) -> Result<()> {
    let path = state_path(data_dir);
    let temporary = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&temporary);
    let text = serde_json::to_vec_pretty(&lease.saved()).map_err(|error| Error::internal(error.to_string()))?;
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
    Arg::new("data-dir").long("data-dir").default_value(DEFAULT_DATA_DIR).help("The daemon's data directory")
}

/// The `lease` and `session` subcommands and one subcommand per tool.
pub fn commands(registry: &ToolRegistry) -> Vec<Command> {
    let session_new = with_schema_args(
        Command::new("new").about("Open a session (its flags are POST /v1/sessions' fields)").arg(data_dir_arg()),
        &crate::tools::schema_of::<CreateSession>(),
    );
    let mut commands = vec![
        Command::new("lease").about("Take (or renew) the CLI's lease and print it").arg(data_dir_arg()),
        Command::new("session")
            .about("Open, list and close sessions (`malo close` also closes the current one)")
            .subcommand_required(true)
            .subcommand(session_new)
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
                    .arg(
                        Arg::new("password-stdin")
                            .long("password-stdin")
                            .action(ArgAction::SetTrue)
                            .help("Read the password from standard input"),
                    )
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
    let data_dir = crate::config::expand_home(sub.get_one::<String>("data-dir").map(String::as_str).unwrap_or(DEFAULT_DATA_DIR))?;
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
    let mut command = Command::new(tool.name)
        .about(tool.description)
        .arg(Arg::new("session").short('s').long("session").help("Session id (default: the CLI's newest session)"))
        .arg(data_dir_arg());
    if tool.presentation.attachment.is_some() {
        command = command.arg(
            Arg::new(OUTPUT_ARG)
                .short('o')
                .long("output")
                .value_name("FILE")
                .help("Write the file the result holds (the picture, the PDF) here instead of printing it as base64"),
        );
    }
    // The help says where the CLI's defaults differ from the schema's.
    let mut schema = tool.input_schema.clone();
    crate::tools::declare_defaults(&mut schema["properties"], tool.presentation.cli_defaults, "Here");
    with_schema_args(command, &schema)
}

/// The CLI's own flag of tools whose result holds a file: where to write it.
const OUTPUT_ARG: &str = "cli-output";

/// Writes the file a result holds to `file`: its base64 `data`, or a copy of the file its
/// `path` names. The result then names `file` (absolute) as `output` instead of holding the
/// bytes.
fn save_attachment(attachment: crate::tools::Attachment, result: &mut Value, file: &Path) -> Result<()> {
    let cannot = |error: std::io::Error| Error::bad_request(format!("cannot write {}: {error}", file.display()));
    let Some(holder) = attachment.holder(result) else {
        return Err(Error::internal(format!("the answer holds no file to write to {}", file.display())));
    };
    match (holder.get("data").and_then(Value::as_str), holder.get("path").and_then(Value::as_str)) {
        (Some(data), _) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|error| Error::internal(format!("the answer's data is not base64: {error}")))?;
            std::fs::write(file, bytes).map_err(cannot)?;
        }
        (None, Some(path)) => {
            std::fs::copy(path, file).map_err(cannot)?;
        }
        (None, None) => return Err(Error::internal(format!("the answer holds no file to write to {}", file.display()))),
    }
    if let Some(object) = holder.as_object_mut() {
        object.remove("data");
        let written = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        object.insert("output".into(), json!(written.display().to_string()));
    }
    Ok(())
}

/// One flag per property of an input's JSON Schema (`max_chars` -> `--max-chars`).
fn with_schema_args(mut command: Command, schema: &Value) -> Command {
    let required: Vec<&str> =
        schema["required"].as_array().map(|names| names.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let (kind, choices) = kind_of(property, schema);
        // The field's own words before its type's (`format`: "`json` (default) or `text`.").
        let description = property["description"].as_str().or(resolve(property, schema)["description"].as_str()).unwrap_or("").to_string();
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
    .unwrap_or(DEFAULT_DATA_DIR);
    let data_dir = crate::config::expand_home(data_dir)?;
    let lease = connect(&data_dir)?;
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let answer = match name {
        "lease" => {
            let listed = lease.list_sessions()?;
            json!({ "lease_id": lease.lease_id, "endpoint": lease.endpoint, "agent_id": CLI_AGENT, "sessions": listed["sessions"] })
        }
        "session" => match matches.subcommand() {
            Some(("new", sub)) => {
                let spec = tool_input(&crate::tools::schema_of::<CreateSession>(), sub)?;
                lease.open_session(&spec)?
            }
            Some(("list", _)) => lease.list_sessions()?,
            Some(("close", sub)) => lease.close_session(sub.get_one::<String>("id").map(String::as_str).unwrap_or_default())?,
            _ => return Err(Error::bad_request("use session new, list or close")),
        },
        tool => {
            let description = registry.get(tool)?;
            let mut input = tool_input(&description.input_schema, matches)?;
            if let Some(fields) = input.as_object_mut() {
                crate::tools::apply_defaults(description.presentation.cli_defaults, fields);
            }
            let (id, _) = lease.session(matches.get_one::<String>("session").map(String::as_str))?;
            let output = lease.call_tool(&id, tool, &input);
            save(&data_dir, &lease)?;
            // The result as the tool gave it, with `tab` and `seq` beside its fields.
            let mut result = output?.flattened();
            // Only a tool whose result holds a file has `-o` (clap panics when asked for an
            // argument a command does not define).
            if let Some(attachment) = description.presentation.attachment {
                if let Some(file) = matches.get_one::<String>(OUTPUT_ARG) {
                    save_attachment(attachment, &mut result, Path::new(file))?;
                }
            }
            if let Some(field) = description.presentation.text_field.filter(|_| result["format"] == "text") {
                return Ok(result[field].as_str().unwrap_or("").trim_end().to_string());
            }
            if result.get("ok") == Some(&Value::Bool(false)) {
                return Err(Error::new(crate::error::ErrorCode::AssertionFailed, format!("{tool} did not pass:\n{}", pretty(&result))));
            }
            return Ok(pretty(&result));
        }
    };
    save(&data_dir, &lease)?;
    Ok(pretty(&answer))
}

/// The daemon (started if needed) and the CLI's lease, renewed on every run, with the
/// sessions an earlier run opened under it.
fn connect(data_dir: &Path) -> Result<LeaseClient> {
    let (_info, broker) = ensure_broker(data_dir)?;
    let lease = LeaseClient::take(&broker, CLI_AGENT)?;
    lease.adopt(&load(data_dir));
    save(data_dir, &lease)?;
    Ok(lease)
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
