//! `malo find <kind> <value> [action [words]]`, as agent-browser's `find` reads: a locator
//! (`role button --name Save`, `text "Sign in"`, `label Email`) and, optionally, an
//! action word that acts on the one element it names (`click`, `fill me@x.test`, `check`).
//! Without an action it calls the `find` tool; with one, the action's tool with the locator
//! as its `locator`, so a locator that matches several elements is the action's error.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::tools::{Positional, ToolDescription, ToolRegistry};

/// The locator kinds, as the first word names them.
const KINDS: [&str; 7] = ["role", "text", "label", "placeholder", "alt", "title", "testid"];

/// The actions that may follow a locator: the word and the tool it calls.
const ACTIONS: [(&str, &str); 11] = [
    ("click", "click"),
    ("dblclick", "click"),
    ("hover", "hover"),
    ("focus", "focus"),
    ("check", "check"),
    ("uncheck", "uncheck"),
    ("fill", "fill"),
    ("type", "type"),
    ("select", "select"),
    ("press", "press"),
    ("scroll-into-view", "scroll_into_view"),
];

/// `find`'s subcommand (its help and completions name the kinds and the action words).
pub(super) fn command(tool: &ToolDescription) -> Command {
    let actions: Vec<&str> = ACTIONS.iter().map(|(word, _)| *word).collect();
    Command::new("find")
        .about(format!("{}.", tool.description.split(". ").next().unwrap_or(tool.description).trim_end_matches('.')))
        .long_about(format!(
            "{}\n\nWith an action word after the locator, acts on the one element it names: {}; fill, type, select and press \
             take their text, value or key next (malo find label Email fill me@x.test).",
            tool.description,
            actions.join(", ")
        ))
        .override_usage("malo find [OPTIONS] <kind> <value> [action [text]]")
        .arg(Arg::new("kind").required(true).value_parser(KINDS).help("What names the element"))
        .arg(Arg::new("value").required(true).help("The role, text, label, placeholder, alt, title or test id"))
        .arg(
            // Flags may follow the action (`click --json`); a text starting with `-` goes
            // after `--` (`fill -- -5`).
            Arg::new("action").num_args(0..).help(format!("An action on the element found, and its text: {}", actions.join(", "))),
        )
        .arg(Arg::new("name").long("name").value_name("TEXT").help("With role: the accessible name"))
        .arg(Arg::new("exact").long("exact").action(ArgAction::SetTrue).help("Whole text and case must match"))
        .arg(
            Arg::new("nth")
                .long("nth")
                .value_name("N")
                .allow_hyphen_values(true)
                .value_parser(clap::value_parser!(i64))
                .help("Which match, from 0; -1 is the last"),
        )
        .arg(Arg::new("first").long("first").action(ArgAction::SetTrue).conflicts_with_all(["nth", "last"]).help("The first match"))
        .arg(Arg::new("last").long("last").action(ArgAction::SetTrue).conflicts_with("nth").help("The last match"))
        .arg(Arg::new("tab").long("tab").value_name("TAB").help("The tab to act on (default: the selected tab)"))
        .arg(
            Arg::new("session")
                .short('s')
                .long("session")
                .help("Session id (default: the CLI's newest session, opened when there is none)"),
        )
        .arg(super::data_dir_arg())
        .arg(super::json_arg())
}

/// The tool a `find` command line calls and its input.
pub(super) fn call(registry: &ToolRegistry, matches: &ArgMatches) -> Result<(ToolDescription, Value)> {
    let text = |id: &str| matches.get_one::<String>(id).cloned();
    let kind = text("kind").unwrap_or_default();
    let mut locator = Map::new();
    locator.insert(kind, json!(text("value").unwrap_or_default()));
    if let Some(name) = text("name") {
        locator.insert("name".into(), json!(name));
    }
    if matches.get_flag("exact") {
        locator.insert("exact".into(), json!(true));
    }
    let nth = match (matches.get_one::<i64>("nth"), matches.get_flag("first"), matches.get_flag("last")) {
        (Some(nth), _, _) => Some(*nth),
        (None, true, _) => Some(0),
        (None, _, true) => Some(-1),
        _ => None,
    };
    if let Some(nth) = nth {
        locator.insert("nth".into(), json!(nth));
    }
    let words: Vec<String> = matches.get_many::<String>("action").map(|words| words.cloned().collect()).unwrap_or_default();
    let describe = |name: &str| registry.describe(name).ok_or_else(|| Error::internal(format!("the registry has no tool {name}")));
    let (mut input, tool) = match words.split_first() {
        None => (locator, describe("find")?),
        Some((word, rest)) => {
            let Some((_, name)) = ACTIONS.iter().find(|(action, _)| action == word) else {
                let known: Vec<&str> = ACTIONS.iter().map(|(action, _)| *action).collect();
                return Err(Error::bad_request(format!("find: {word:?} is not an action; the actions: {}", known.join(", "))));
            };
            let tool = describe(name)?;
            let mut input = Map::new();
            input.insert("locator".into(), Value::Object(locator));
            if word == "dblclick" {
                input.insert("click_count".into(), json!(2));
            }
            // The words after the action fill its positional fields (fill's text, press's key).
            let fields: Vec<&str> = tool
                .presentation
                .positional
                .iter()
                .filter_map(|argument| match argument {
                    Positional::Field(field) => Some(*field),
                    Positional::Target => None,
                })
                .collect();
            if rest.len() > fields.len() {
                return Err(Error::bad_request(format!("find ... {word} takes {} word(s) after it, not {}", fields.len(), rest.len())));
            }
            for (field, value) in fields.iter().zip(rest) {
                input.insert(field.to_string(), json!(value));
            }
            (input, tool)
        }
    };
    if let Some(tab) = text("tab") {
        input.insert("tab".into(), json!(tab));
    }
    Ok((tool, Value::Object(input)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<(&'static str, Value)> {
        let registry = ToolRegistry::standard();
        let find = registry.describe("find").unwrap();
        let matches = command(&find)
            .try_get_matches_from(std::iter::once("find").chain(words.iter().copied()))
            .map_err(|error| Error::bad_request(error.to_string()))?;
        call(&registry, &matches).map(|(tool, input)| (tool.name, input))
    }

    #[test]
    fn a_locator_and_an_action_word_make_the_actions_call() {
        assert_eq!(parse(&["role", "button", "--name", "Save"]).unwrap(), ("find", json!({ "role": "button", "name": "Save" })));
        assert_eq!(
            parse(&["role", "button", "--name", "Save", "click"]).unwrap(),
            ("click", json!({ "locator": { "role": "button", "name": "Save" } }))
        );
        assert_eq!(
            parse(&["label", "Email", "fill", "me@x.test"]).unwrap(),
            ("fill", json!({ "locator": { "label": "Email" }, "text": "me@x.test" }))
        );
        assert_eq!(parse(&["text", "Sign in", "--last"]).unwrap(), ("find", json!({ "text": "Sign in", "nth": -1 })));
        assert_eq!(parse(&["testid", "go", "--nth", "-2", "--exact"]).unwrap().1, json!({ "testid": "go", "nth": -2, "exact": true }));
        assert_eq!(parse(&["role", "link", "dblclick"]).unwrap(), ("click", json!({ "locator": { "role": "link" }, "click_count": 2 })));
        assert!(parse(&["role", "button", "explode"]).unwrap_err().message.contains("not an action"));
        assert!(parse(&["colour", "red"]).is_err(), "an unknown kind is refused");
        assert!(parse(&["label", "Email", "click", "extra"]).is_err());
        // Flags after the action word are the command's, not the action's words.
        assert_eq!(
            parse(&["role", "button", "--name", "Save", "click", "--json", "--data-dir", "/tmp/d"]).unwrap(),
            ("click", json!({ "locator": { "role": "button", "name": "Save" } }))
        );
        assert_eq!(parse(&["label", "Age", "fill", "--", "-5"]).unwrap().1, json!({ "locator": { "label": "Age" }, "text": "-5" }));
    }
}
