//! Which tools an MCP connection lists: a core set that does the common loop (open, look,
//! act, wait, read what happened, take a picture, manage tabs), and groups of the rest an
//! agent enables when its task needs them: at start (`malo mcp --caps network,files`,
//! `--caps all`, `MALO_MCP_CAPS`) or at run time (`browser_enable_caps`). The HTTP API,
//! OpenAPI and the CLI keep every tool; this is only what MCP lists.

use std::collections::BTreeSet;

use crate::error::{Error, Result};

/// A group of tools beyond the core set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// Responses' bodies, interception, HAR, network conditions, extra headers.
    Network,
    /// Uploads and downloads.
    Files,
    /// State and identity: cookies, storage, profiles, geolocation, permissions, popups.
    State,
    /// Pictures and coordinates: the mouse at a point, observe, the viewport's size.
    Vision,
    /// Printing the page to PDF.
    Pdf,
    /// Scripts, checks, finer input (hover, check, scroll, focus) and debugging.
    Devtools,
    /// A person: login by a person, watching a session.
    Person,
    /// More sessions than the connection's default one.
    Sessions,
    /// Reading and comparing pages: read (the main content as Markdown), diff, and elements
    /// found by role, name, text or label (find).
    Content,
    /// Emulation: media features, device presets, HTTP credentials, the session's clipboard.
    Emulation,
}

impl Group {
    /// Every group, in the order the docs list them.
    pub const ALL: [Group; 10] = [
        Group::Network,
        Group::Files,
        Group::State,
        Group::Vision,
        Group::Pdf,
        Group::Devtools,
        Group::Person,
        Group::Sessions,
        Group::Content,
        Group::Emulation,
    ];

    /// The group's name, as `--caps` and `browser_enable_caps` take it.
    pub fn name(self) -> &'static str {
        match self {
            Group::Network => "network",
            Group::Files => "files",
            Group::State => "state",
            Group::Vision => "vision",
            Group::Pdf => "pdf",
            Group::Devtools => "devtools",
            Group::Person => "person",
            Group::Sessions => "sessions",
            Group::Content => "content",
            Group::Emulation => "emulation",
        }
    }

    fn named(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|group| group.name() == name)
    }
}

/// The group of a tool listed over MCP (`browser_` and the registry's name, or one of the
/// MCP-only session tools); `None`: the core set. A registry tool named nowhere here is in
/// `devtools` (a unit test keeps the table complete).
pub fn group_of(tool: &str) -> Option<Group> {
    let tool = tool.strip_prefix(super::PREFIX).unwrap_or(tool);
    Some(match tool {
        "navigate" | "history" | "snapshot" | "screenshot" | "click" | "fill" | "type" | "press" | "select" | "wait_for" | "dialog"
        | "requests" | "console" | "tab_new" | "tab_list" | "tab_select" | "tab_close" | "enable_caps" => return None,
        "responses"
        | "network_capture"
        | "add_intercept_rule"
        | "remove_intercept_rule"
        | "list_intercept_rules"
        | "export_har"
        | "set_network_conditions"
        | "set_extra_http_headers"
        | "wait_for_event" => Group::Network,
        "set_file_input" | "set_download_behavior" | "list_downloads" | "cancel_download" => Group::Files,
        "cookies" | "storage_state" | "set_geolocation" | "grant_permissions" | "profiles" | "profile_clone" | "set_popup_policy" => {
            Group::State
        }
        "mouse" | "observe" | "set_viewport" | "drag" => Group::Vision,
        "pdf" => Group::Pdf,
        "read" | "diff" | "find" => Group::Content,
        "login" | "watch" | "highlight" => Group::Person,
        "session_new" | "session_list" | "session_close" | "close" => Group::Sessions,
        "emulate" | "clipboard" => Group::Emulation,
        _ => Group::Devtools,
    })
}

/// Registry tools MCP never lists: one-line reads for the command line (`get`, `is`), whose
/// agents over MCP have `extract`, `assert` and `evaluate`.
pub const CLI_ONLY: [&str; 2] = ["get", "is"];

/// Whether `group_of` names `tool` itself (rather than falling back to `devtools`).
#[cfg(test)]
pub(super) fn named_explicitly(tool: &str) -> bool {
    const DEVTOOLS: [&str; 17] = [
        "evaluate",
        "extract",
        "run_steps",
        "assert",
        "events",
        "page_errors",
        "cdp_endpoint",
        "hover",
        "check",
        "uncheck",
        "scroll",
        "focus",
        "scroll_into_view",
        "sleep",
        "a11y",
        "vitals",
        "init_script",
    ];
    group_of(tool) != Some(Group::Devtools) || DEVTOOLS.contains(&tool) || CLI_ONLY.contains(&tool)
}

/// The groups a connection has enabled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caps(BTreeSet<Group>);

impl Caps {
    /// Every group.
    pub fn all() -> Caps {
        Caps(Group::ALL.into_iter().collect())
    }

    /// Reads a comma-separated list of groups (`network,files`, or `all`; empty: none).
    pub fn parse(list: &str) -> Result<Caps> {
        let mut caps = Caps::default();
        caps.enable(list.split(',').map(str::trim).filter(|name| !name.is_empty()))?;
        Ok(caps)
    }

    /// Enables the named groups (or `all`); an unknown name enables nothing and is an error
    /// that lists the groups. Answers the groups that were not enabled before.
    pub fn enable<'name>(&mut self, names: impl IntoIterator<Item = &'name str>) -> Result<Vec<Group>> {
        let mut wanted = BTreeSet::new();
        for name in names {
            if name == "all" {
                wanted.extend(Group::ALL);
                continue;
            }
            let group = Group::named(name).ok_or_else(|| {
                Error::bad_request(format!("there is no tool group {name:?}; the groups: {}, or all", names_of(&Group::ALL)))
            })?;
            wanted.insert(group);
        }
        let added: Vec<Group> = wanted.difference(&self.0).copied().collect();
        self.0.extend(added.iter().copied());
        Ok(added)
    }

    /// Whether a tool (by its MCP name) is listed with these groups.
    pub fn lists(&self, tool: &str) -> bool {
        let cli_only = CLI_ONLY.contains(&tool.strip_prefix(super::PREFIX).unwrap_or(tool));
        !cli_only && group_of(tool).is_none_or(|group| self.0.contains(&group))
    }

    /// Whether `group` is enabled.
    pub fn has(&self, group: Group) -> bool {
        self.0.contains(&group)
    }

    /// The groups not enabled.
    pub fn missing(&self) -> Vec<Group> {
        Group::ALL.into_iter().filter(|group| !self.0.contains(group)).collect()
    }
}

/// `network, files`.
pub fn names_of(groups: &[Group]) -> String {
    groups.iter().map(|group| group.name()).collect::<Vec<_>>().join(", ")
}

/// The caps `malo mcp` starts with: its `--caps`, else `MALO_MCP_CAPS`, else none.
pub fn from_flag_or_environment(flag: Option<&str>) -> Result<Caps> {
    match flag.map(str::to_string).or_else(|| std::env::var("MALO_MCP_CAPS").ok()) {
        Some(list) => Caps::parse(&list),
        None => Ok(Caps::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_of_groups_parse_and_unknown_names_are_refused_with_the_groups() {
        assert_eq!(Caps::parse("").unwrap(), Caps::default());
        assert_eq!(Caps::parse("all").unwrap(), Caps::all());
        let caps = Caps::parse("network, pdf").unwrap();
        assert!(caps.has(Group::Network) && caps.has(Group::Pdf) && !caps.has(Group::Files));
        assert!(caps.lists("browser_pdf") && caps.lists("browser_click") && !caps.lists("browser_set_file_input"));
        let refused = Caps::parse("network,nope").unwrap_err();
        assert!(refused.message.contains("\"nope\"") && refused.message.contains("sessions"), "{}", refused.message);
        let mut growing = Caps::default();
        assert_eq!(growing.enable(["files", "files"]).unwrap(), vec![Group::Files]);
        assert_eq!(growing.enable(["files"]).unwrap(), Vec::<Group>::new());
    }

    #[test]
    fn reading_is_its_own_group_and_the_command_lines_one_line_reads_are_never_listed() {
        let content = Caps::parse("content").unwrap();
        assert!(content.lists("browser_read") && !Caps::default().lists("browser_read"));
        assert!(Caps::parse("person").unwrap().lists("browser_highlight"));
        for cli_only in ["browser_get", "browser_is"] {
            assert!(!Caps::all().lists(cli_only), "{cli_only}");
        }
    }

    #[test]
    fn every_registry_tool_is_in_the_table() {
        for tool in crate::tools::ToolRegistry::standard().catalogue() {
            assert!(named_explicitly(tool.name), "{}: add it to caps::group_of", tool.name);
        }
    }
}
