//! `malo skill`: a short guide to the CLI for coding agents (a skill file, at most 1,000
//! o200k tokens). Every command line it shows is built from the registry (the tool's CLI name
//! and its positional arguments), and a test parses each one against the real command
//! line, so the guide cannot name a tool or a flag that does not exist.

use crate::tools::{ToolDescription, ToolRegistry};

/// How a tool is typed: `malo fill <ref|selector> <text>`; `malo ?name?` for a tool the
/// registry does not have (which the tests refuse).
fn usage(catalogue: &[ToolDescription], tool: &str) -> String {
    let Some(found) = catalogue.iter().find(|listed| listed.name == tool) else {
        return format!("malo ?{tool}?");
    };
    let mut words = vec!["malo".to_string(), found.presentation.cli_alias.map(str::to_string).unwrap_or_else(|| tool.replace('_', "-"))];
    words.extend(found.presentation.positional.iter().map(|argument| format!("<{}>", super::args::positional_name(argument))));
    words.join(" ")
}

/// The guide, for agents.
pub fn skill(registry: &ToolRegistry) -> String {
    let catalogue = registry.catalogue();
    let u = |tool: &str| usage(&catalogue, tool);
    let mut others: Vec<String> = catalogue.iter().map(|tool| tool.presentation.cli_alias.unwrap_or(tool.name).replace('_', "-")).collect();
    others.push("batch".to_string());
    others.sort();
    format!(
        "---
name: malo-browser
description: Browse the web from the shell with malo: open pages, read them as text with element refs, click, fill, screenshot, and hand over to a person for logins. Use it whenever a task needs a real browser.
---

# malo: a browser from the shell

malo drives hidden, isolated WebKit pages through a local daemon that starts on first use.
The first page command opens a session; later commands reuse it, and
`malo close` ends it. Output is short text, piped or not; `--json` gives the daemon's
JSON.

## The loop
1. `{navigate}` loads a page and waits until it is quiet.
2. `malo snapshot` shows the page as lines; each interactive element has a ref such as
   `e12`. `--changes` shows only what changed.
3. Act by ref (or a CSS selector; `@e12` is the same ref): `{click}`, `{fill}`,
   `{select}`, `{press}` (Enter, Control+A), `{type}`, `{check}`, `{hover}`.
   An action prints `ok` and what it caused (navigated, download, popup, dialog).
4. Check: `malo assert --text \"Welcome\"` exits 1 when it fails; `{wait_for}` waits.
5. Find by role and name instead: `malo find role button --name Save click`.

Read without a snapshot: `malo read` (main text as Markdown), `{evaluate}`.
Changes since the last look: `malo diff snapshot` (or screenshot, url A B). Audits: `malo a11y`, `malo vitals`.

## Pictures, tabs, files
`malo screenshot -o page.png` (`--full-page`, `--ref e12`, `--marks` draws the refs);
`malo pdf -o page.pdf`. Tabs: `{tab_new}`, `malo tab-list`, `{tab_select}`; page commands
take `--tab <tab>`. Downloads land in the session's folder (`malo list-downloads`);
upload with `{set_file_input}`.

## Asking a person
For a login or a CAPTCHA, do not guess: `malo login --mode watch` shows the page
to the person and waits until they are done. Saved passwords: `malo login --mode password
--credential NAME` (you never see them).

## Errors
A failure prints `E_CODE: message` on stderr and exits 1: `E_NOT_FOUND`, `E_STALE_REF`
(snapshot again), `E_COVERED` or `E_NOT_VISIBLE` (close the overlay, scroll), `E_TIMEOUT`.

## More
Several sessions: `malo session new`, then `-s <session>`. What the page loaded and
logged: `malo requests`, `malo console`, `malo page-errors`.
`malo batch --bail` runs commands from stdin, one a line, in one process.
Over MCP (`malo mcp`) core tools come first; groups add the rest (network, files, state,
vision, pdf, devtools, person, sessions, content, emulation, all): `--caps network,files`,
`MALO_MCP_CAPS`, or a core tool at run time.
All commands: {others}.
",
        navigate = u("navigate"),
        click = u("click"),
        fill = u("fill"),
        select = u("select"),
        press = u("press"),
        type = u("type"),
        check = u("check"),
        hover = u("hover"),
        wait_for = u("wait_for"),
        evaluate = u("evaluate"),
        tab_new = u("tab_new"),
        tab_select = u("tab_select"),
        set_file_input = u("set_file_input"),
        others = others.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines the guide shows: every backquoted snippet that starts with `malo `.
    fn shown_commands(text: &str) -> Vec<String> {
        text.split('`').skip(1).step_by(2).filter(|snippet| snippet.starts_with("malo ")).map(str::to_string).collect()
    }

    /// A command line split as a shell would (double quotes only).
    fn words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let (mut word, mut quoted) = (String::new(), false);
        for character in line.chars() {
            match character {
                '"' => quoted = !quoted,
                ' ' | '\n' if !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                other => word.push(other),
            }
        }
        words.extend((!word.is_empty()).then_some(word));
        words
    }

    #[test]
    fn every_command_the_guide_shows_parses_against_the_real_command_line() {
        let registry = ToolRegistry::standard();
        let text = skill(&registry);
        assert!(!text.contains("malo ?"), "a tool the registry does not have:\n{text}");
        let command_line = <crate::Cli as clap::CommandFactory>::command().subcommands(super::super::commands(&registry));
        let shown = shown_commands(&text);
        assert!(shown.len() > 20, "{shown:?}");
        for line in shown {
            // Placeholders stand for a value.
            let filled: Vec<String> = words(&line)
                .into_iter()
                .map(|word| if word.starts_with('<') { "e1".to_string() } else { word.replace("NAME", "shop") })
                .collect();
            if let Err(error) = command_line.clone().try_get_matches_from(&filled) {
                panic!("the guide shows `{line}`, which does not parse: {error}");
            }
        }
    }

    #[test]
    fn the_cli_document_shows_each_positional_form_as_the_registry_has_it() {
        let catalogue = ToolRegistry::standard().catalogue();
        let document = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/CLI.md")).unwrap().replace("\\|", "|");
        let forms: Vec<String> =
            catalogue.iter().filter(|tool| !tool.presentation.positional.is_empty()).map(|tool| usage(&catalogue, tool.name)).collect();
        for shown in shown_commands(&document).into_iter().filter(|line| line.contains('<')) {
            let shown = shown.trim_end_matches("...").to_string();
            assert!(forms.contains(&shown), "docs/CLI.md shows `{shown}`, which is not a form of {forms:?}");
        }
        for tool in catalogue.iter().filter(|tool| !tool.presentation.positional.is_empty()) {
            let cli_name = tool.presentation.cli_alias.map(str::to_string).unwrap_or_else(|| tool.name.replace('_', "-"));
            assert!(
                document.contains(&format!("`{}", usage(&catalogue, tool.name))) || document.contains(&format!("`{cli_name}`")),
                "{cli_name}"
            );
        }
    }

    #[test]
    fn the_guide_is_at_most_a_thousand_tokens_and_teaches_text_json_and_the_groups() {
        let text = skill(&ToolRegistry::standard());
        let tokens = tiktoken_rs::o200k_base().expect("the o200k tokenizer").encode_with_special_tokens(&text).len();
        assert!(tokens <= 1000, "{tokens} tokens");
        for taught in [
            "--json",
            "--caps",
            "MALO_MCP_CAPS",
            "network",
            "files",
            "state",
            "vision",
            "pdf",
            "devtools",
            "person",
            "sessions",
            "content",
            "emulation",
        ] {
            assert!(text.contains(taught), "{taught} missing:\n{text}");
        }
        // The count, for whoever reads the test output.
        eprintln!("malo skill: {tokens} o200k tokens, {} words", text.split_whitespace().count());
    }
}
