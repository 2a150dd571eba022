//! The tool registry: every tool is defined once (name, description, input type whose
//! JSON Schema is generated from the Rust type, handler). The HTTP API serves it; the
//! MCP server and the CLI are generated from it, so nothing about a tool may live only
//! in an HTTP handler.
//!
//! Handlers are plain async Rust: they know sessions and the engine, not HTTP.

mod a11y;
mod action_input;
mod artifacts;
mod assert;
mod close;
mod console;
mod devtools;
mod dialog;
mod diff;
mod downloads;
mod element_reads;
mod emulation;
mod events;
mod find;
mod forms;
mod highlight;
mod history;
mod identity;
mod init_script;
mod keys;
mod lean;
mod limits;
mod local_files;
mod login;
mod marks;
mod mouse;
mod navigate;
mod network;
mod network_conditions;
mod numbers;
mod observe;
mod outcome;
mod page_agent;
#[cfg(test)]
mod page_tests;
mod parse;
mod pdf;
mod pdf_pages;
mod pointer;
mod policy_gate;
mod presentation;
mod profiles;
mod read;
mod reader;
mod request_lines;
mod requests;
mod run_steps;
mod screenshot;
mod scroll;
mod since;
mod snapshot;
mod storage;
mod storage_origins;
mod tabs;
mod targeting;
mod upload;
mod viewport;
mod vitals;
mod wait;
mod wait_for_event;
mod watch;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

pub use self::parse::{nested_error, parse_strict};
pub use self::presentation::{
    apply_current_page, apply_defaults, declare_defaults, default_value, Attachment, LocalPath, Positional, Presentation,
    CURRENT_PAGE_DEFAULT,
};

use crate::engine::{FromAnswer, TabRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::session::{Session, SessionTable};
use crate::state::TabState;
pub use lean::Lean;

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session the call addresses.
    pub session: Arc<Session>,
    /// The lease's sessions (for `close`).
    pub sessions: Arc<SessionTable>,
    /// The registry itself (for `run_steps`).
    pub registry: Arc<ToolRegistry>,
    /// The tab a page tool acts on (resolved by the registry from the call's `tab`, else
    /// the selected tab); `None` for session tools.
    pub tab: Option<Arc<TabState>>,
}

impl ToolContext {
    /// A context for a call on `session`; the registry resolves the tab.
    pub fn new(session: Arc<Session>, sessions: Arc<SessionTable>, registry: Arc<ToolRegistry>) -> ToolContext {
        ToolContext { session, sessions, registry, tab: None }
    }

    /// The tab this call acts on.
    pub fn tab(&self) -> Result<&Arc<TabState>> {
        self.tab.as_ref().ok_or_else(|| Error::internal("a page tool ran without a tab"))
    }

    /// For a session tool that takes `tab` as a filter: checks that the tab is open
    /// (`E_TAB_NOT_FOUND` when it is not); naming none is fine.
    pub fn check_tab_filter(&self, tab: Option<&str>) -> Result<()> {
        match tab {
            Some(tab) => self.session.tabs.get(Some(tab)).map(drop),
            None => Ok(()),
        }
    }

    /// Asks the engine something of this call's tab.
    pub async fn ask<T: FromAnswer>(&self, request: TabRequest) -> Result<T> {
        let target = self.session.address(self.tab()?);
        self.session.engine.tab(target, request).await
    }
}

/// What a tool acts on, which decides what the registry does before calling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A page tool: takes `tab` (default: the selected tab), and holds that tab's call
    /// lock while it runs, so calls on one tab run one at a time, in arrival order.
    Page,
    /// Reads or waits on a tab (`tab` as for page tools) without the lock: an agent may
    /// wait in one call and act in another.
    Tab,
    /// The session as a whole; no `tab` is resolved (a tool may take its own).
    Session,
}

/// What a tool takes: its input, parsed strictly from the call's JSON, whose JSON Schema
/// the catalogue shows.
pub trait ToolInput: DeserializeOwned + JsonSchema + Send + 'static {}
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolInput for T {}

/// What a tool answers: its result, written as JSON, whose JSON Schema the catalogue shows.
pub trait ToolAnswer: Serialize + JsonSchema {}
impl<T: Serialize + JsonSchema> ToolAnswer for T {}

/// What runs a tool: an async function (or closure) of the call's context and its input
/// that answers its result or an error. Every tool constructor takes one.
pub trait Handler<Input, Output>: Send + Sync + 'static {
    /// The run of one call.
    type Future: Future<Output = Result<Output>> + Send + 'static;
    /// Runs the tool on one call.
    fn run(&self, context: ToolContext, input: Input) -> Self::Future;
}

impl<Input, Output, Handle, Fut> Handler<Input, Output> for Handle
where
    Handle: Fn(ToolContext, Input) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output>> + Send + 'static,
{
    type Future = Fut;

    fn run(&self, context: ToolContext, input: Input) -> Fut {
        self(context, input)
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
/// A parsed call, ready to run.
type Prepared = Box<dyn FnOnce(ToolContext) -> BoxFuture<Result<Value>> + Send>;
/// Parses a call's input (strictly) into a prepared call.
type Parser = Arc<dyn Fn(Value) -> Result<Prepared> + Send + Sync>;

/// One tool.
#[derive(Clone)]
pub struct Tool {
    /// Stable name, e.g. `navigate`.
    pub name: &'static str,
    /// What it does, for models and people.
    pub description: &'static str,
    /// JSON Schema of its input.
    pub input_schema: Value,
    /// JSON Schema of its result.
    pub output_schema: Value,
    /// What it acts on.
    pub scope: Scope,
    /// How MCP and the CLI show it.
    pub presentation: Presentation,
    /// Whether an agent waits on it as on a click: while it runs, other sessions' pages keep
    /// off one CPU (`engine::cpu_share`). Page tools are, but for those that load pages or
    /// wait for a person ([`Tool::long`]).
    pub interactive: bool,
    parse: Parser,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Tool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Tool {
    /// A page tool (see [`Scope::Page`]): takes `tab` and holds that tab's lock while it
    /// runs. Its input is `I`, parsed strictly; its result is `O`.
    pub fn page<I: ToolInput, O: ToolAnswer>(name: &'static str, description: &'static str, handle: impl Handler<I, O>) -> Tool {
        Tool::build(name, description, Scope::Page, handle)
    }

    /// A tool that reads or waits on a tab (see [`Scope::Tab`]): takes `tab`, no lock.
    pub fn tab<I: ToolInput, O: ToolAnswer>(name: &'static str, description: &'static str, handle: impl Handler<I, O>) -> Tool {
        Tool::build(name, description, Scope::Tab, handle)
    }

    /// A tool of the session as a whole (see [`Scope::Session`]).
    pub fn session<I: ToolInput, O: ToolAnswer>(name: &'static str, description: &'static str, handle: impl Handler<I, O>) -> Tool {
        Tool::build(name, description, Scope::Session, handle)
    }

    /// The tool shown this way over MCP and the CLI (keeping its positional arguments, CLI
    /// alias and local paths, which [`Tool::positional`], [`Tool::cli_alias`] and
    /// [`Tool::local_paths`] set).
    pub fn presented(mut self, presentation: Presentation) -> Tool {
        let Presentation { positional, cli_alias, local_paths, mcp_lean, .. } = self.presentation;
        let mcp_lean = presentation.mcp_lean.or(mcp_lean);
        self.presentation = Presentation { positional, cli_alias, local_paths, mcp_lean, ..presentation };
        self
    }

    /// The input fields naming files the tool reads (see [`Presentation::local_paths`]).
    pub fn local_paths(mut self, local_paths: &'static [LocalPath]) -> Tool {
        self.presentation.local_paths = local_paths;
        self
    }

    /// The tool's positional arguments on the command line (see [`Presentation::positional`]).
    pub fn positional(mut self, positional: &'static [Positional]) -> Tool {
        self.presentation.positional = positional;
        self
    }

    /// A shorter name of its CLI subcommand (see [`Presentation::cli_alias`]).
    pub fn cli_alias(mut self, alias: &'static str) -> Tool {
        self.presentation.cli_alias = Some(alias);
        self
    }

    /// A page tool that loads pages or waits for a person: others' pages do not make room
    /// for it (see [`Tool::interactive`]).
    pub fn long(mut self) -> Tool {
        self.interactive = false;
        self
    }

    fn build<Input: ToolInput, Output: ToolAnswer>(
        name: &'static str,
        description: &'static str,
        scope: Scope,
        handle: impl Handler<Input, Output>,
    ) -> Tool {
        let handle = Arc::new(handle);
        let parse: Parser = Arc::new(move |raw| {
            let input: Input = parse_strict(raw, &format!("invalid input for {name}"))?;
            let handle = handle.clone();
            let prepared: Prepared = Box::new(move |context| {
                Box::pin(async move {
                    let output = handle.run(context, input).await?;
                    serde_json::to_value(output).map_err(|error| Error::internal(error.to_string()))
                })
            });
            Ok(prepared)
        });
        // A registry for one CLI command describes that tool's input only (see
        // `ToolRegistry::for_command`): the schemas are most of a CLI call's own time.
        let (input_wanted, output_wanted) = SCHEMAS_OF.with(|only| match only.get() {
            Some(only) => (only == name, false),
            None => (true, true),
        });
        let mut input_schema = if input_wanted { schema_of::<Input>() } else { json!({}) };
        if scope != Scope::Session && input_wanted {
            add_tab_property(&mut input_schema);
        }
        let output_schema = if output_wanted { output_schema_of::<Output>() } else { json!({}) };
        let interactive = scope == Scope::Page;
        Tool { name, description, input_schema, output_schema, scope, presentation: Presentation::default(), interactive, parse }
    }
}

/// The JSON Schema of an input type, without the meta-schema line: what the registry,
/// MCP and the CLI describe inputs with.
pub fn schema_of<Input: JsonSchema>() -> Value {
    without_meta_schema(schemars::schema_for!(Input))
}

fn without_meta_schema(schema: schemars::Schema) -> Value {
    let mut schema = serde_json::to_value(schema).unwrap_or_else(|_| json!({}));
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

/// The JSON Schema of a result type as it is written (serde's serialize side: a field
/// skipped when empty is optional, an `Option` that is always written is required and may
/// be null), without the meta-schema line.
pub fn output_schema_of<Output: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    without_meta_schema(generator.into_root_schema_for::<Output>())
}

/// Every page tool takes `tab`; the registry reads it before the tool's own input.
fn add_tab_property(schema: &mut Value) {
    if let Some(object) = schema.as_object_mut() {
        let properties = object.entry("properties").or_insert_with(|| json!({}));
        properties["tab"] = json!({
            "type": "string",
            "description": "The tab to act on (a short id from tab_list or tab_new); default: the selected tab. An unknown tab is E_TAB_NOT_FOUND."
        });
    }
}

/// A tool as the catalogue lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDescription {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// JSON Schema of the input.
    pub input_schema: Value,
    /// JSON Schema of the result.
    pub output_schema: Value,
    /// How MCP and the CLI show it.
    #[serde(skip)]
    pub presentation: Presentation,
}

/// What a tool call answers, on every surface (seed 002, INV-1): the tab it concerned and
/// the seq of the call, beside the tool's own result.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ToolOutput {
    /// The tool.
    pub tool: String,
    /// The tab the call acted on (a session tool: the selected tab after it); null when
    /// the session has no tab.
    pub tab: Option<String>,
    /// The call's place in the daemon-wide sequence.
    pub seq: u64,
    /// The tool's own result.
    pub result: Value,
}

impl ToolOutput {
    /// The result with `tab` and `seq` beside its own fields, for the surfaces that answer
    /// a result directly (the `navigate`, `observe` and `events` routes, MCP).
    pub fn flattened(self) -> Value {
        let mut result = self.result;
        if let Some(object) = result.as_object_mut() {
            object.insert("tab".into(), json!(self.tab));
            object.insert("seq".into(), json!(self.seq));
        }
        result
    }
}

/// All tools, in catalogue order.
#[derive(Debug)]
pub struct ToolRegistry {
    tools: Vec<Tool>,
}

thread_local! {
    /// While a registry for one CLI command is built on this thread: the one tool whose
    /// input schema it generates (no output schemas at all).
    static SCHEMAS_OF: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

impl ToolRegistry {
    /// The product's tools.
    pub fn standard() -> ToolRegistry {
        let mut tools = vec![navigate::tool(), history::tool(), snapshot::tool(), observe::tool(), screenshot::tool()];
        tools.extend(read::tools());
        tools.push(reader::tool());
        tools.extend(element_reads::tools());
        tools.push(highlight::tool());
        // The actions, in the order the catalogue has always listed them.
        tools.extend([
            pointer::click_tool(),
            forms::fill_tool(),
            keys::press_tool(),
            keys::type_tool(),
            pointer::hover_tool(),
            forms::select_tool(),
            forms::check_tool(),
            forms::uncheck_tool(),
            forms::focus_tool(),
            scroll::scroll_tool(),
            scroll::scroll_into_view_tool(),
            pointer::drag_tool(),
            mouse::tool(),
            wait::wait_for_tool(),
            wait::sleep_tool(),
        ]);
        tools.extend([
            dialog::tool(),
            assert::tool(),
            run_steps::tool(),
            login::tool(),
            watch::tool(),
            profiles::tool(),
            events::tool(),
            close::tool(),
        ]);
        tools.extend(tabs::tools());
        tools.extend(identity::tools());
        tools.extend(devtools::tools());
        tools.extend(downloads::tools());
        tools.extend([upload::tool(), wait_for_event::tool(), pdf::tool()]);
        tools.extend(network::tools());
        tools.push(network_conditions::tool());
        tools.extend(console::tools());
        tools.extend(storage::tools());
        tools.extend([profiles::clone_tool(), viewport::tool()]);
        tools.extend([diff::tool(), a11y::tool(), vitals::tool()]);
        tools.extend(emulation::tools());
        tools.extend([find::tool(), init_script::tool()]);
        ToolRegistry { tools }
    }

    /// The registry a CLI command needs when its first word names a tool (its name, with
    /// hyphens, or its CLI alias): every tool, but only that one's input schema, and no
    /// output schema. `None` when no tool has that name.
    pub fn for_command(word: &str) -> Option<ToolRegistry> {
        let named = |tool: &Tool| word == tool.name || word.replace('-', "_") == tool.name || Some(word) == tool.presentation.cli_alias;
        // Built once without any schema to find the tool, then with its own.
        let name = ToolRegistry::generating(None, ToolRegistry::standard).tools.iter().find(|tool| named(tool))?.name;
        Some(ToolRegistry::generating(Some(name), ToolRegistry::standard))
    }

    /// Builds with the schemas of `only` (no tool's when `None`), on this thread.
    fn generating(only: Option<&'static str>, build: impl FnOnce() -> ToolRegistry) -> ToolRegistry {
        SCHEMAS_OF.with(|cell| cell.set(Some(only.unwrap_or(""))));
        let registry = build();
        SCHEMAS_OF.with(|cell| cell.set(None));
        registry
    }

    /// The description of one tool.
    pub fn describe(&self, name: &str) -> Option<ToolDescription> {
        self.tools.iter().find(|tool| tool.name == name).map(|tool| ToolDescription {
            name: tool.name,
            description: tool.description,
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            presentation: tool.presentation,
        })
    }

    /// The catalogue.
    pub fn catalogue(&self) -> Vec<ToolDescription> {
        self.tools
            .iter()
            .map(|tool| ToolDescription {
                name: tool.name,
                description: tool.description,
                input_schema: tool.input_schema.clone(),
                output_schema: tool.output_schema.clone(),
                presentation: tool.presentation,
            })
            .collect()
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Result<&Tool> {
        self.tools
            .iter()
            .find(|tool| tool.name == name)
            .ok_or_else(|| Error::new(ErrorCode::UnknownTool, format!("there is no tool named {name:?}; GET /v1/tools lists them")))
    }

    /// Calls a tool: parses its input strictly, resolves its tab, takes the tab's call
    /// lock for a page tool (waiting its turn behind earlier calls), runs it, and records
    /// the call in the session's events (name, outcome, duration; never the input, which
    /// may hold secrets).
    pub async fn call(&self, name: &str, context: ToolContext, input: Value) -> Result<ToolOutput> {
        self.run(name, context, input, Locking::Take).await
    }

    /// [`ToolRegistry::call`] for a step of `run_steps`, which already holds the lock of
    /// `context.tab`: the step runs on that tab (another `tab` is refused), unlocked.
    pub async fn call_step(&self, name: &str, context: ToolContext, input: Value) -> Result<ToolOutput> {
        self.run(name, context, input, Locking::Held).await
    }

    async fn run(&self, name: &str, mut context: ToolContext, input: Value, locking: Locking) -> Result<ToolOutput> {
        let tool = self.get(name)?;
        let mut input = if input.is_null() { json!({}) } else { input };
        whole_floats_to_integers(&mut input);
        if has_nul(&input) {
            // Strings reach C APIs (GLib, WebKit) that end them at NUL.
            return Err(Error::bad_request(format!("invalid input for {name}: strings may not contain NUL characters")));
        }
        let wanted_tab = match tool.scope {
            Scope::Session => None,
            Scope::Page | Scope::Tab => Some(take_tab(name, &mut input)?),
        };
        let gate_input = crate::policy::gate::GATES.iter().any(|gate| gate.tool == tool.name).then(|| input.clone());
        let prepared = (tool.parse)(input)?;
        let session = context.session.clone();
        let in_use = session.in_use();
        let mut lock_tab = None;
        if let Some(wanted) = wanted_tab {
            {
                let tab = match (locking, &context.tab) {
                    (Locking::Held, Some(held)) => {
                        if wanted.as_deref().is_some_and(|wanted| wanted != held.id) {
                            return Err(Error::bad_request(format!(
                                "a step of run_steps acts on the run's tab ({}); run another run_steps for tab {}",
                                held.id,
                                wanted.unwrap_or_default()
                            )));
                        }
                        held.clone()
                    }
                    _ => session.tabs.get(wanted.as_deref())?,
                };
                if (tool.scope, locking) == (Scope::Page, Locking::Take) {
                    lock_tab = Some(tab.clone());
                }
                context.tab = Some(tab);
            }
        }
        // The person's policy, before the call's turn: a wait for a person holds no tab lock.
        // A refusal is the call's outcome (and its action event), the tool never runs.
        let admitted = match &gate_input {
            Some(gate_input) => policy_gate::admit(&context, tool.name, gate_input).await,
            None => Ok(()),
        };
        // Calls on one tab run one at a time: this one waits its turn here.
        let _turn = match (&lock_tab, &admitted) {
            (Some(tab), Ok(())) => Some(tab.lock.lock().await),
            _ => None,
        };
        if let Some(tab) = context.tab.as_ref().filter(|tab| tab.is_closed() && admitted.is_ok()) {
            return Err(Error::new(ErrorCode::TabNotFound, format!("tab {} was closed", tab.id)));
        }
        // Other sessions' pages make room while an agent waits on this one.
        let _served = match (&context.tab, &admitted) {
            (Some(tab), Ok(())) if tool.interactive => Some(session.engine.serve(session.address(tab))),
            _ => None,
        };
        let begun = Instant::now();
        let result = match admitted {
            Ok(()) => prepared(context.clone()).await,
            Err(refused) => Err(refused),
        };
        let duration_ms = begun.elapsed().as_millis() as u64;
        let tab = context.tab.as_ref().map(|tab| tab.id.clone()).or_else(|| session.tabs.selected_id());
        // Reading the log is not an action: recording it would flood the log it reads.
        let seq = if matches!(tool.name, "close" | "events") {
            session.events.next_seq()
        } else {
            let outcome = crate::events::EventKind::Action {
                tool: tool.name.to_string(),
                ok: result.is_ok(),
                duration_ms,
                error: result.as_ref().err().map(|error| error.code.as_str()),
            };
            session.events.push(tab.as_deref(), outcome)
        };
        drop(in_use);
        Ok(ToolOutput { tool: tool.name.to_string(), tab, seq, result: result? })
    }
}

/// Whether a call takes its tab's lock or runs under one its caller holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Locking {
    Take,
    Held,
}

/// Removes `tab` from a page tool's input: a short id, or absent.
fn take_tab(name: &str, input: &mut Value) -> Result<Option<String>> {
    let Some(object) = input.as_object_mut() else { return Ok(None) };
    match object.remove("tab") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(tab)) => Ok(Some(tab)),
        Some(_) => Err(Error::bad_request(format!("invalid input for {name}: tab must be a string (a tab id)"))),
    }
}

/// Whether any string (or key) in the value holds a NUL character.
fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(object) => object.iter().any(|(key, value)| key.contains('\0') || has_nul(value)),
        _ => false,
    }
}

/// `5.0` -> `5`: JSON does not tell the two apart, and clients (and models) send either.
pub(crate) fn whole_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64() {
                if float.fract() == 0.0 && float.abs() < 9.0e15 {
                    *value = if float < 0.0 { json!(float as i64) } else { json!(float as u64) };
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_to_integers),
        Value::Object(object) => object.values_mut().for_each(whole_floats_to_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_schemas_and_unique_names() {
        let registry = ToolRegistry::standard();
        let catalogue = registry.catalogue();
        let mut names: Vec<_> = catalogue.iter().map(|tool| tool.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), catalogue.len());
        for tool in &catalogue {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            assert!(!tool.description.is_empty());
        }
        let navigate = registry.get("navigate").unwrap();
        assert_eq!(navigate.input_schema["required"], json!(["url"]));
        assert!(registry.get("nope").is_err());
    }

    #[test]
    fn positional_arguments_name_fields_of_their_tools_input() {
        for tool in ToolRegistry::standard().catalogue() {
            let properties = &tool.input_schema["properties"];
            let positional = tool.presentation.positional;
            for argument in positional {
                match argument {
                    Positional::Field(field) => assert!(properties.get(field).is_some(), "{}: no field {field}", tool.name),
                    Positional::Target => {
                        assert!(properties.get("ref").is_some() && properties.get("selector").is_some(), "{}", tool.name)
                    }
                }
                assert_eq!(positional.iter().filter(|other| *other == argument).count(), 1, "{}: {argument:?} twice", tool.name);
            }
        }
        let registry = ToolRegistry::standard();
        assert_eq!(registry.get("fill").unwrap().presentation.positional, &[Positional::Target, Positional::Field("text")]);
        assert_eq!(registry.get("evaluate").unwrap().presentation.cli_alias, Some("eval"));
    }

    #[test]
    fn a_registry_for_one_command_describes_that_tools_input_as_the_standard_one_does() {
        let standard = ToolRegistry::standard();
        for (word, name) in [("navigate", "navigate"), ("wait-for", "wait_for"), ("eval", "evaluate"), ("tab_new", "tab_new")] {
            let registry = ToolRegistry::for_command(word).expect(word);
            assert_eq!(registry.get(name).unwrap().input_schema, standard.get(name).unwrap().input_schema, "{word}");
            assert_eq!(registry.catalogue().len(), standard.catalogue().len());
            assert_eq!(registry.get("click").unwrap().presentation, standard.get("click").unwrap().presentation);
        }
        assert!(ToolRegistry::for_command("skill").is_none() && ToolRegistry::for_command("mcp").is_none());
        assert_eq!(ToolRegistry::standard().get("click").unwrap().input_schema, standard.get("click").unwrap().input_schema, "reset after");
    }

    #[test]
    fn a_surfaces_defaults_apply_only_to_a_call_that_sets_none_of_their_fields() {
        let defaults = [("format", "text"), ("max_width", "1568")];
        let mut bare = serde_json::Map::new();
        apply_defaults(&defaults, &mut bare);
        assert_eq!(Value::Object(bare), json!({ "format": "text", "max_width": 1568 }));
        let mut chosen = json!({ "format": "json" }).as_object().cloned().unwrap();
        apply_defaults(&defaults, &mut chosen);
        assert_eq!(Value::Object(chosen), json!({ "format": "json" }));
    }
}
