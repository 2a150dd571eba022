//! `run_steps`: run a list of tool calls in order in the daemon, stopping at the first
//! failure unless `stop_on_failure` is false, and write a run report to `artifacts/`.
//! Step inputs that may hold secrets (typed text) never reach the report.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::limits::MAX_RUN_STEPS;
use super::{Tool, ToolContext};
use crate::error::{Error, Result};

/// Tools that cannot run inside `run_steps`.
const REFUSED: [&str; 6] = ["watch", "login", "profiles", "network_capture", "responses", "run_steps"];
/// Step fields kept out of the report.
const SECRET_FIELDS: [&str; 4] = ["text", "password", "username", "prompt_text"];

/// Input of `run_steps`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunStepsInput {
    /// Steps: each an object with `type` (a tool name) and that tool's input fields.
    #[schemars(length(min = 1, max = MAX_RUN_STEPS))]
    steps: Vec<Map<String, Value>>,
    /// Stop at the first failed step (default true).
    #[serde(default)]
    stop_on_failure: Option<bool>,
}

/// Output of `run_steps`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RunStepsOutput {
    /// Whether every step that ran succeeded.
    ok: bool,
    /// How many steps ran.
    step_count: usize,
    /// The first step that failed, from 0 (null: none).
    failed_step: Option<usize>,
    /// Each step that ran.
    steps: Vec<StepRecord>,
    /// The run report in `artifacts/`.
    report_path: String,
}

/// The run report written to `artifacts/`.
#[derive(Debug, Serialize)]
struct RunReport<'a> {
    ok: bool,
    step_count: usize,
    failed_step: Option<usize>,
    steps: &'a [StepRecord],
    session_id: &'a str,
    finished_at: String,
}

/// One step that ran.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StepRecord {
    /// Its place in `steps`, from 0.
    index: usize,
    /// The tool it called.
    #[serde(rename = "type")]
    tool: String,
    /// Its input, with fields that may hold secrets `[redacted]`.
    input: Value,
    /// How long it took.
    duration_ms: u64,
    /// The tool's result, when it answered one (any tool's result).
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    /// Its error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<StepError>,
    /// Whether it succeeded (a result with `ok: false`, a failed assertion, did not).
    ok: bool,
}

/// A step's error, as the error body has it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StepError {
    /// The `E_*` code.
    code: &'static str,
    /// What went wrong.
    message: String,
    /// The error's details.
    details: Value,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "run_steps",
        "Run several tool calls in order, e.g. [{\"type\":\"click\",\"ref\":\"e3\"},{\"type\":\"assert\",\"text\":\"Saved\"}]. Stops at the first failure unless stop_on_failure=false; writes a run report to artifacts/. watch, login, profiles, network_capture, responses and run_steps cannot be steps.",
        run,
    )
    .long()
}

async fn run(context: ToolContext, input: RunStepsInput) -> Result<RunStepsOutput> {
    if input.steps.is_empty() || input.steps.len() > MAX_RUN_STEPS {
        return Err(Error::bad_request(format!("steps must hold 1 to {MAX_RUN_STEPS} steps")));
    }
    // Check every step before running any.
    let mut plan = Vec::new();
    for (index, step) in input.steps.iter().enumerate() {
        let Some(kind) = step.get("type").and_then(Value::as_str) else {
            return Err(Error::bad_request(format!("step {index} has no type (a tool name)")));
        };
        if REFUSED.contains(&kind) {
            return Err(Error::bad_request(format!("step {index}: {kind} cannot run inside run_steps")));
        }
        context.registry.get(kind).map_err(|error| Error::new(error.code, format!("step {index}: {}", error.message)))?;
        let mut arguments = step.clone();
        arguments.remove("type");
        plan.push((kind.to_string(), Value::Object(arguments)));
    }
    let stop_on_failure = input.stop_on_failure.unwrap_or(true);
    let mut steps = Vec::new();
    let mut failed_step = None;
    for (index, (kind, arguments)) in plan.into_iter().enumerate() {
        let begun = Instant::now();
        // The run holds its tab's lock; its steps run under it, in order.
        let outcome = context.registry.call_step(&kind, context.clone(), arguments.clone()).await.map(|output| output.result);
        let duration_ms = begun.elapsed().as_millis() as u64;
        let input = redacted(&arguments);
        let record = match outcome {
            Ok(result) => {
                let ok = result.get("ok") != Some(&Value::Bool(false));
                StepRecord { index, tool: kind, input, duration_ms, result: Some(result), error: None, ok }
            }
            Err(error) => {
                let error = StepError { code: error.code.as_str(), message: error.message, details: error.details };
                StepRecord { index, tool: kind, input, duration_ms, result: None, error: Some(error), ok: false }
            }
        };
        let ok = record.ok;
        steps.push(record);
        if !ok && failed_step.is_none() {
            failed_step = Some(index);
        }
        if !ok && stop_on_failure {
            break;
        }
    }
    let ok = failed_step.is_none();
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
    let report_path = context.session.dirs.artifacts.join(format!("run-{millis}.json"));
    let report = RunReport {
        ok,
        step_count: steps.len(),
        failed_step,
        steps: &steps,
        session_id: &context.session.id,
        finished_at: crate::clock::now(),
    };
    tokio::fs::write(&report_path, serde_json::to_vec_pretty(&report).unwrap_or_default())
        .await
        .map_err(|error| Error::internal(format!("cannot write the run report: {error}")))?;
    Ok(RunStepsOutput { ok, step_count: steps.len(), failed_step, steps, report_path: report_path.display().to_string() })
}

fn redacted(arguments: &Value) -> Value {
    let mut copy = arguments.clone();
    if let Some(object) = copy.as_object_mut() {
        for field in SECRET_FIELDS {
            if object.contains_key(field) {
                object.insert(field.to_string(), json!("[redacted]"));
            }
        }
    }
    copy
}
