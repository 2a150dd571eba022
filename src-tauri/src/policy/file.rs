//! `<data-dir>/policy.toml` as the person writes it: read strictly (an unknown key, a
//! wrong value or a malformed domain is an error with its line and column), turned into a
//! [`Policy`], and described in plain words for `malo policy check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::domains::DomainPattern;
use super::{Decision, Gated, Policy, Rules, ANY_PROFILE, DEFAULT_APPROVAL_TIMEOUT};

/// The longest a person may be waited for.
const MAX_APPROVAL_SECONDS: u64 = 600;

/// The largest policy file read (a policy is a few lines; anything bigger is a mistake).
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Why a policy file cannot be used, with where in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyFileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line of the mistake (0 when it concerns the whole file).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for PolicyFileError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(formatter, "{}: {}", self.path.display(), self.message)
        } else {
            write!(formatter, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
        }
    }
}

impl std::error::Error for PolicyFileError {}

/// The file's top level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    approval_timeout_seconds: Option<Spanned<u64>>,
    #[serde(default)]
    anonymous: Option<RulesFile>,
    #[serde(default)]
    profiles: BTreeMap<Spanned<String>, RulesFile>,
}

/// One `[anonymous]` or `[profiles.<name>]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    allow_domains: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    block_domains: Vec<Spanned<String>>,
    #[serde(default)]
    tools: ToolsFile,
    #[serde(default)]
    credentials: Option<Vec<String>>,
    #[serde(default)]
    open: Option<Decision>,
}

/// A `tools` table: one decision per gated action.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsFile {
    evaluate: Option<Decision>,
    intercept: Option<Decision>,
    response_bodies: Option<Decision>,
    export_har: Option<Decision>,
    storage_state_export: Option<Decision>,
    downloads: Option<Decision>,
    uploads: Option<Decision>,
}

/// Reads the policy at `path`: `Ok(None)` when there is no file (no policy: nothing is
/// restricted).
pub fn read(path: &Path) -> Result<Option<Policy>, PolicyFileError> {
    let whole = |message: String| PolicyFileError { path: path.to_path_buf(), line: 0, column: 0, message };
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(whole(format!("cannot read it: {error}"))),
    };
    if !metadata.is_file() {
        return Err(whole("it is not a regular file".into()));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(whole(format!("it is larger than {MAX_FILE_BYTES} bytes")));
    }
    let text = std::fs::read_to_string(path).map_err(|error| whole(format!("cannot read it as UTF-8 text: {error}")))?;
    parse(&text, path).map(Some)
}

/// Parses a policy's text (`path` only names it in errors).
pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyFileError> {
    let at = |offset: usize, message: String| {
        let (line, column) = line_and_column(text, offset);
        PolicyFileError { path: path.to_path_buf(), line, column, message }
    };
    let file: PolicyFile = toml::from_str(text).map_err(|error| {
        let offset = error.span().map(|span| span.start).unwrap_or(0);
        at(offset, error.message().trim().to_string())
    })?;
    let anonymous = file.anonymous.map(|rules| rules_of(rules, "anonymous", &at)).transpose()?;
    let mut profiles = BTreeMap::new();
    let mut any_profile = None;
    for (name, rules) in file.profiles {
        let valid = name.as_ref() == ANY_PROFILE || profile_name_is_valid(name.as_ref());
        if !valid {
            return Err(at(
                name.span().start,
                format!(
                    "{:?} is not a profile name (lowercase letters, digits, '.', '_', '-'; or \"*\" for every other profile)",
                    name.as_ref()
                ),
            ));
        }
        let scope = if name.as_ref() == ANY_PROFILE { "profiles.\"*\"".to_string() } else { format!("profiles.{}", name.as_ref()) };
        let rules = rules_of(rules, &scope, &at)?;
        if name.as_ref() == ANY_PROFILE {
            any_profile = Some(rules);
        } else {
            profiles.insert(name.into_inner(), rules);
        }
    }
    let approval_timeout = match file.approval_timeout_seconds {
        None => DEFAULT_APPROVAL_TIMEOUT,
        Some(seconds) if (1..=MAX_APPROVAL_SECONDS).contains(seconds.as_ref()) => std::time::Duration::from_secs(*seconds.as_ref()),
        Some(seconds) => {
            return Err(at(seconds.span().start, format!("approval_timeout_seconds is between 1 and {MAX_APPROVAL_SECONDS}")));
        }
    };
    Ok(Policy { approval_timeout, anonymous, profiles, any_profile })
}

fn rules_of(file: RulesFile, scope: &str, at: &impl Fn(usize, String) -> PolicyFileError) -> Result<Rules, PolicyFileError> {
    let patterns = |written: Vec<Spanned<String>>| -> Result<Vec<DomainPattern>, PolicyFileError> {
        written.into_iter().map(|entry| DomainPattern::parse(entry.as_ref()).map_err(|reason| at(entry.span().start, reason))).collect()
    };
    let tools_file = file.tools;
    let mut tools = BTreeMap::new();
    for (gated, decision) in [
        (Gated::Evaluate, tools_file.evaluate),
        (Gated::Intercept, tools_file.intercept),
        (Gated::ResponseBodies, tools_file.response_bodies),
        (Gated::ExportHar, tools_file.export_har),
        (Gated::StorageStateExport, tools_file.storage_state_export),
        (Gated::Downloads, tools_file.downloads),
        (Gated::Uploads, tools_file.uploads),
    ] {
        if let Some(decision) = decision {
            tools.insert(gated, decision);
        }
    }
    Ok(Rules {
        scope: scope.to_string(),
        allow_domains: file.allow_domains.map(patterns).transpose()?,
        block_domains: patterns(file.block_domains)?,
        tools,
        credentials: file.credentials,
        open: file.open.unwrap_or(Decision::Allow),
        locked: None,
    })
}

/// A profile's name as `ProfileStore` accepts it (1 to 64 of `a-z`, `0-9`, `.`, `_`, `-`).
fn profile_name_is_valid(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c))
        && name != "."
        && name != ".."
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map(|last| last.chars().count()).unwrap_or(0) + 1;
    (line, column)
}

/// What a policy means, in plain words (`malo policy check`).
pub fn describe(policy: &Policy) -> String {
    let mut lines = vec![format!("A person asked to approve has {} s to answer.", policy.approval_timeout.as_secs())];
    let mut section = |title: String, rules: Option<&Rules>| {
        lines.push(title);
        match rules {
            None => lines.push("  no rules: every site, every tool, every credential".into()),
            Some(rules) => lines.extend(describe_rules(rules).into_iter().map(|line| format!("  {line}"))),
        }
    };
    section("Anonymous sessions:".into(), policy.anonymous.as_ref());
    for (name, rules) in &policy.profiles {
        section(format!("Profile {name:?}:"), Some(rules));
    }
    if policy.any_profile.is_some() || !policy.profiles.is_empty() {
        let title = if policy.profiles.is_empty() { "Every profile:".to_string() } else { "Every other profile:".to_string() };
        section(title, policy.any_profile.as_ref());
    } else {
        section("Profiles:".into(), None);
    }
    lines.push("Agents cannot change this file: no tool, API call or MCP call writes it.".into());
    lines.join("\n")
}

fn describe_rules(rules: &Rules) -> Vec<String> {
    let list = |patterns: &[DomainPattern]| patterns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let mut lines = Vec::new();
    lines.push(match rules.open {
        Decision::Allow => "opening it: allowed".to_string(),
        Decision::Ask => "opening it: a person is asked, once per lease".to_string(),
        Decision::Deny => "opening it: refused".to_string(),
    });
    match &rules.allow_domains {
        None => lines.push("sites: any".into()),
        Some(allowed) if allowed.is_empty() => lines.push("sites: none (allow_domains is empty)".into()),
        Some(allowed) => lines.push(format!("sites: only {}", list(allowed))),
    }
    if !rules.block_domains.is_empty() {
        lines.push(format!("never: {}", list(&rules.block_domains)));
    }
    for gated in Gated::ALL {
        let (decision, _) = rules.tool(gated);
        let said = match decision {
            Decision::Allow => "allowed",
            Decision::Deny => "refused",
            Decision::Ask => "a person is asked",
        };
        lines.push(format!("{}: {said}", gated.words()));
    }
    lines.push(match &rules.credentials {
        None => "vault credentials: any (each on its own origin)".into(),
        Some(names) if names.is_empty() => "vault credentials: none".into(),
        Some(names) => format!("vault credentials: only {} (each on its own origin)", names.join(", ")),
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Policy {
        parse(text, Path::new("policy.toml")).unwrap()
    }

    fn refused(text: &str) -> PolicyFileError {
        parse(text, Path::new("policy.toml")).unwrap_err()
    }

    #[test]
    fn the_documented_example_parses_into_its_rules() {
        let policy = parsed(super::super::EXAMPLE);
        let work = policy.rules_for(Some("work"));
        assert_eq!(work.scope, "profiles.work");
        assert_eq!(work.open, Decision::Ask);
        assert_eq!(work.tool(Gated::Evaluate), (Decision::Deny, "profiles.work.tools.evaluate".to_string()));
        assert_eq!(work.tool(Gated::Downloads).0, Decision::Ask);
        assert_eq!(work.tool(Gated::Uploads).0, Decision::Allow);
        assert_eq!(work.credentials.as_deref(), Some(&["work-sso".to_string()][..]));
        assert!(work.refuses_host("intranet.example.com").is_none());
        assert!(work.refuses_host("elsewhere.net").is_some());
        let anonymous = policy.rules_for(None);
        assert!(anonymous.refuses_host("tracker.ads.example").is_some());
        assert_eq!(policy.rules_for(Some("other")).scope, "profiles.\"*\"");
        let words = describe(&policy);
        assert!(words.contains("Profile \"work\":"), "{words}");
        assert!(words.contains("run JavaScript in pages (evaluate): refused"), "{words}");
    }

    #[test]
    fn mistakes_are_refused_with_their_line_and_column() {
        let error = refused("[anonymous]\nblock_domains = [\"ok.example\",\n  \"https://bad.example\"]\n");
        assert_eq!((error.line, error.column), (3, 3), "{error}");
        assert!(error.message.contains("URL"), "{error}");
        let error = refused("[profiles.work]\n[profiles.work.tools]\nevaluate = \"maybe\"\n");
        assert_eq!(error.line, 3, "{error}");
        assert!(error.message.contains("maybe"), "{error}");
        let error = refused("[anonymous]\nallow_domain = []\n");
        assert_eq!(error.line, 2, "{error}");
        assert!(error.message.contains("allow_domain"), "{error}");
        let error = refused("[profiles.\"Not Valid\"]\n");
        assert_eq!(error.line, 1, "{error}");
        let error = refused("[anonymous\n");
        assert_eq!(error.line, 1, "{error}");
        assert_eq!(error.to_string(), format!("policy.toml:1:{}: {}", error.column, error.message));
    }

    #[test]
    fn an_empty_file_restricts_nothing() {
        let policy = parsed("# nothing yet\n");
        let rules = policy.rules_for(Some("any"));
        assert!(rules.refuses_host("example.com").is_none());
        assert!(Gated::ALL.iter().all(|gated| rules.tool(*gated).0 == Decision::Allow));
        assert_eq!(rules.open, Decision::Allow);
    }

    #[test]
    fn lines_and_columns_count_characters() {
        assert_eq!(line_and_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_and_column("é\nx", 3), (2, 1));
        assert_eq!(line_and_column("x", 99), (1, 2));
    }
}
