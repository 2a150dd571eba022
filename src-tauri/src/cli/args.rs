//! A tool's command line, generated from its input's JSON Schema and its presentation: one
//! flag per field (`max_chars` -> `--max-chars`), the positional arguments the tool names
//! (`malo fill e3 hello`), and reading both back into the tool's JSON input.

use std::collections::BTreeMap;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::tools::{LocalPath, Positional, ToolDescription};

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

/// The JSON types a property accepts, looking into `anyOf`/`oneOf` and `$ref`s.
fn types_of(property: &Value, root: &Value) -> Vec<String> {
    let property = resolve(property, root);
    let mut types: Vec<String> = match &property["type"] {
        Value::String(single) => vec![single.clone()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    for alternatives in [&property["anyOf"], &property["oneOf"]] {
        for alternative in alternatives.as_array().into_iter().flatten() {
            types.extend(types_of(alternative, root));
        }
    }
    types
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

/// The id of a positional argument's clap `Arg` (never a schema field's name).
fn positional_id(argument: &Positional) -> String {
    match argument {
        Positional::Field(field) => format!("{field}-positional"),
        Positional::Target => "target-positional".to_string(),
    }
}

/// How a positional argument is shown in usage lines and in `malo skill` (`<ref|selector>`).
pub(crate) fn positional_name(argument: &Positional) -> String {
    match argument {
        Positional::Field(field) => field.to_string(),
        Positional::Target => "ref|selector".to_string(),
    }
}

/// Whether a positional field takes every remaining word (an array field: `files`).
fn takes_many(schema: &Value, field: &str) -> bool {
    types_of(&schema["properties"][field], schema).iter().any(|kind| kind == "array")
}

/// The subcommand of one tool: its flags, its positional arguments, `-s SESSION`,
/// `--data-dir`, `--json`, and `-o FILE` when its result holds a file.
pub(crate) fn tool_command(tool: &ToolDescription) -> Command {
    let cli_name = tool.name.replace('_', "-");
    // `malo --help` lists a sentence per tool; `malo <tool> --help` gives it all.
    let first_sentence = tool.description.split(". ").next().unwrap_or(tool.description).trim_end_matches('.');
    let mut usage = format!("malo {cli_name} [OPTIONS]");
    for argument in tool.presentation.positional {
        usage.push_str(&format!(" <{}>", positional_name(argument)));
    }
    let mut command = Command::new(cli_name.clone())
        .about(format!("{first_sentence}."))
        .long_about(tool.description)
        .override_usage(usage)
        .arg(
            Arg::new("session")
                .short('s')
                .long("session")
                .help("Session id (default: the CLI's newest session, opened when there is none)"),
        )
        .arg(super::data_dir_arg())
        .arg(super::json_arg());
    if cli_name != tool.name {
        command = command.alias(tool.name);
    }
    if let Some(alias) = tool.presentation.cli_alias {
        command = command.visible_alias(alias);
    }
    if tool.presentation.attachment.is_some() {
        command = command.arg(
            Arg::new(super::OUTPUT_ARG)
                .short('o')
                .long("output")
                .value_name("FILE")
                .help("Write the file the result holds (the picture, the PDF) here instead of printing it as base64"),
        );
    }
    // The help says where the CLI's defaults differ from the schema's.
    let mut schema = tool.input_schema.clone();
    crate::tools::declare_defaults(&mut schema["properties"], tool.presentation.cli_defaults, "Without --json");
    if tool.presentation.current_page {
        crate::tools::declare_defaults(&mut schema["properties"], &[crate::tools::CURRENT_PAGE_DEFAULT], "Without --after,");
    }
    let positional = tool.presentation.positional;
    command = with_schema_args(command, &schema, positional);
    for argument in positional {
        let id = positional_id(argument);
        let mut arg = Arg::new(id.clone()).value_name(positional_name(argument));
        arg = match argument {
            Positional::Target => {
                arg.help("The element: a ref from snapshot (e12 or @e12), else a CSS selector").conflicts_with_all(["ref", "selector"])
            }
            Positional::Field(field) => {
                let help = format!("Same as --{}", field.replace('_', "-"));
                if takes_many(&schema, field) {
                    arg.help(help).num_args(1..)
                } else {
                    arg.help(help)
                }
            }
        };
        command = command.arg(arg);
    }
    command
}

/// One flag per property of an input's JSON Schema (`max_chars` -> `--max-chars`). A
/// required field that is also positional may be given either way, not both.
pub(crate) fn with_schema_args(mut command: Command, schema: &Value, positional: &[Positional]) -> Command {
    let required: Vec<&str> =
        schema["required"].as_array().map(|names| names.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let (kind, choices) = kind_of(property, schema);
        // The field's own words before its type's (`format`: "`json` (default) or `text`.").
        let description = property["description"].as_str().or(resolve(property, schema)["description"].as_str()).unwrap_or("").to_string();
        let flag = name.replace('_', "-");
        let as_positional = positional.iter().find(|argument| matches!(argument, Positional::Field(field) if field == name));
        let must = required.contains(&name.as_str());
        let mut arg = Arg::new(name.clone()).long(flag).help(description).required(must && as_positional.is_none());
        arg = match kind {
            Kind::Flag => arg.action(ArgAction::Set).num_args(0..=1).default_missing_value("true").value_parser(clap::value_parser!(bool)),
            Kind::Integer => arg.value_parser(clap::value_parser!(i64)).value_name("N"),
            Kind::Number => arg.value_parser(clap::value_parser!(f64)).value_name("N"),
            Kind::Json => arg.value_name("JSON"),
            Kind::Text if !choices.is_empty() => arg.value_parser(clap::builder::PossibleValuesParser::new(choices)),
            Kind::Text => arg.value_name("TEXT"),
        };
        command = command.arg(arg);
        if let Some(argument) = as_positional {
            command = command.group(ArgGroup::new(format!("{name}-given")).args([name.clone(), positional_id(argument)]).required(must));
        }
    }
    command
}

/// A tool's input from its flags and positional arguments.
pub(crate) fn tool_input(schema: &Value, positional: &[Positional], matches: &ArgMatches) -> Result<Value> {
    let mut input = schema_input(schema, matches)?;
    let Some(fields) = input.as_object_mut() else { return Ok(input) };
    for argument in positional {
        let id = positional_id(argument);
        let Some(words) = matches.get_many::<String>(&id) else { continue };
        let words: Vec<String> = words.cloned().collect();
        match argument {
            Positional::Target => {
                let word = words.into_iter().next().unwrap_or_default();
                if is_ref(&word) {
                    fields.insert("ref".into(), json!(word.trim_start_matches('@')));
                } else {
                    fields.insert("selector".into(), json!(word));
                }
            }
            Positional::Field(field) => {
                let property = &schema["properties"][*field];
                fields.insert(field.to_string(), positional_value(field, property, schema, words)?);
            }
        }
    }
    if let Some(Value::String(element_ref)) = fields.get_mut("ref") {
        *element_ref = element_ref.trim_start_matches('@').to_string();
    }
    Ok(input)
}

/// Makes the paths of files the tool reads absolute, against this process's directory (the
/// shell's): `malo storage-state import ./state.json`, `malo set-file-input '#f' a.txt`.
/// The daemon reads them from its own directory, so it takes absolute paths only.
pub(crate) fn absolute_paths(local_paths: &[LocalPath], input: &mut Value) -> Result<()> {
    for local in local_paths {
        if let Some((field, value)) = local.when {
            if input.get(field).and_then(Value::as_str) != Some(value) {
                continue;
            }
        }
        let Some(given) = input.get_mut(local.field) else { continue };
        let paths: Vec<&mut Value> = match given {
            Value::Array(items) => items.iter_mut().collect(),
            single => vec![single],
        };
        for path in paths {
            let Some(text) = path.as_str().filter(|text| !text.is_empty() && !text.starts_with('/')) else { continue };
            let absolute = std::path::absolute(text)
                .map_err(|error| Error::bad_request(format!("{}: cannot make {text:?} absolute: {error}", local.field)))?;
            *path = json!(absolute.display().to_string());
        }
    }
    Ok(())
}

/// Whether a word is a ref (`e12`, `@e12`) rather than a selector.
pub(crate) fn is_ref(word: &str) -> bool {
    let number = word.strip_prefix('@').unwrap_or(word).strip_prefix('e').unwrap_or("");
    !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
}

/// A positional field's words as the JSON its schema wants.
fn positional_value(field: &str, property: &Value, root: &Value, words: Vec<String>) -> Result<Value> {
    let types = types_of(property, root);
    let (kind, _) = kind_of(property, root);
    let single = || words.first().cloned().unwrap_or_default();
    let unreadable = |word: String| Error::bad_request(format!("{field}: {word:?} is not a number"));
    Ok(match kind {
        Kind::Integer => json!(single().parse::<i64>().map_err(|_| unreadable(single()))?),
        Kind::Number => json!(single().parse::<f64>().map_err(|_| unreadable(single()))?),
        Kind::Flag => json!(single() == "true"),
        Kind::Text => json!(single()),
        Kind::Json if words.len() == 1 && types.iter().any(|kind| kind == "string") => json!(single()),
        Kind::Json => json!(words),
    })
}

/// The input fields given as flags.
fn schema_input(schema: &Value, matches: &ArgMatches) -> Result<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolRegistry;

    fn parse(tool: &str, words: &[&str]) -> Result<Value> {
        let registry = ToolRegistry::standard();
        let description = registry.catalogue().into_iter().find(|listed| listed.name == tool).expect("a tool");
        let command = tool_command(&description);
        let matches = command
            .try_get_matches_from(std::iter::once(tool).chain(words.iter().copied()))
            .map_err(|error| Error::bad_request(error.to_string()))?;
        tool_input(&description.input_schema, description.presentation.positional, &matches)
    }

    #[test]
    fn positional_words_fill_the_fields_the_tool_names() {
        assert_eq!(parse("navigate", &["https://example.com"]).unwrap(), json!({ "url": "https://example.com" }));
        assert_eq!(parse("navigate", &["--url", "https://example.com"]).unwrap(), json!({ "url": "https://example.com" }));
        assert!(parse("navigate", &[]).is_err(), "url is required either way");
        assert!(parse("navigate", &["https://a.test", "--url", "https://b.test"]).is_err(), "not both");
        assert_eq!(parse("click", &["@e12"]).unwrap(), json!({ "ref": "e12" }));
        assert_eq!(parse("click", &["e7"]).unwrap(), json!({ "ref": "e7" }));
        assert_eq!(parse("click", &["#save"]).unwrap(), json!({ "selector": "#save" }));
        assert_eq!(parse("click", &["--ref", "@e3"]).unwrap(), json!({ "ref": "e3" }));
        assert!(parse("click", &["e3", "--selector", "#x"]).is_err());
        assert_eq!(parse("fill", &["e3", "hello world"]).unwrap(), json!({ "ref": "e3", "text": "hello world" }));
        assert_eq!(parse("select", &["e9", "42"]).unwrap(), json!({ "ref": "e9", "value": "42" }));
        assert_eq!(parse("sleep", &["20"]).unwrap(), json!({ "ms": 20 }));
        assert_eq!(parse("set_file_input", &["#f", "/a", "/b"]).unwrap(), json!({ "selector": "#f", "files": ["/a", "/b"] }));
        assert_eq!(parse("evaluate", &["1 + 1"]).unwrap(), json!({ "expression": "1 + 1" }));
    }

    #[test]
    fn paths_of_files_read_are_made_absolute_against_the_shells_directory() {
        let here = std::env::current_dir().unwrap();
        let registry = ToolRegistry::standard();
        let local = |tool: &str| registry.catalogue().into_iter().find(|listed| listed.name == tool).unwrap().presentation.local_paths;
        let mut input = parse("storage_state", &["import", "./state.json"]).unwrap();
        absolute_paths(local("storage_state"), &mut input).unwrap();
        assert_eq!(input, json!({ "action": "import", "path": here.join("state.json").display().to_string() }));
        let mut input = parse("storage_state", &["import", "/srv/state.json"]).unwrap();
        absolute_paths(local("storage_state"), &mut input).unwrap();
        assert_eq!(input["path"], "/srv/state.json", "an absolute path stays as given");
        // export writes a name in the session's artifacts/: left alone.
        let mut input = parse("storage_state", &["--action", "export", "--path", "saved.json"]).unwrap();
        absolute_paths(local("storage_state"), &mut input).unwrap();
        assert_eq!(input, json!({ "action": "export", "path": "saved.json" }));
        let mut input = parse("set_file_input", &["#f", "a.txt", "/b.txt", "../c.txt"]).unwrap();
        absolute_paths(local("set_file_input"), &mut input).unwrap();
        let expected = [here.join("a.txt"), "/b.txt".into(), here.join("../c.txt")].map(|path| path.display().to_string());
        assert_eq!(input["files"], json!(expected));
    }

    #[test]
    fn refs_are_told_from_selectors() {
        for word in ["e1", "@e12", "e007"] {
            assert!(is_ref(word), "{word}");
        }
        for word in ["e", "@e", "#e12", "em", "e12 > a", "button", "@12"] {
            assert!(!is_ref(word), "{word}");
        }
    }
}
