//! `vitals`: the page's Core Web Vitals as WebKit measures them: time to first byte (the
//! navigation's timing), first contentful paint, largest contentful paint and cumulative
//! layout shift, read from the page's performance timeline by a `PerformanceObserver` in
//! the isolated world (buffered entries: what happened before the call counts). A metric
//! this WebKit does not report, or that the page has not produced yet, is null with the
//! reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Tool, ToolContext};
use crate::engine::TabRequest;
use crate::error::{Error, ErrorCode};

/// Input of `vitals`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VitalsInput {}

/// Output of `vitals`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct VitalsOutput {
    /// The page measured.
    url: String,
    /// Time to first byte (ms from the navigation's start to the response's first byte).
    ttfb_ms: Option<f64>,
    /// First contentful paint (ms from the navigation's start).
    fcp_ms: Option<f64>,
    /// Largest contentful paint so far (ms from the navigation's start).
    lcp_ms: Option<f64>,
    /// Cumulative layout shift (the largest session window of shifts not caused by input).
    cls: Option<f64>,
    /// Each metric that is null, and why.
    not_measured: Vec<NotMeasured>,
}

/// A metric without a value.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct NotMeasured {
    /// `ttfb_ms`, `fcp_ms`, `lcp_ms` or `cls`.
    metric: String,
    /// Why.
    reason: String,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "vitals",
        "Core Web Vitals as WebKit measures them: ttfb_ms, fcp_ms, lcp_ms, cls; one it cannot measure is null, with why.",
        |context: ToolContext, _input: VitalsInput| async move {
            let measured: Value = context.ask(TabRequest::Evaluate { body: MEASURE.into() }).await?;
            serde_json::from_value::<VitalsOutput>(measured)
                .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page's timings are unreadable: {error}")))
        },
    )
}

/// Reads the metrics in the isolated world (web-vitals' definitions: LCP's last candidate,
/// CLS's session windows of at most 5 s with gaps under 1 s).
const MEASURE: &str = r#"
const supported = (typeof PerformanceObserver === 'function' && PerformanceObserver.supportedEntryTypes) || [];
const entries = (type) => new Promise((resolve) => {
  if (!supported.includes(type)) { resolve(null); return; }
  const seen = [];
  const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
  observer.observe({ type, buffered: true });
  setTimeout(() => { seen.push(...observer.takeRecords()); observer.disconnect(); resolve(seen); }, 30);
});
const [paints, largest, shifts] = await Promise.all([entries('paint'), entries('largest-contentful-paint'), entries('layout-shift')]);
const not_measured = [];
const missing = (metric, reason) => { not_measured.push({ metric, reason }); return null; };
const unsupported = (type) => `this WebKit does not report ${type} entries`;
const round = (value) => Math.round(value * 10) / 10;
const navigation = performance.getEntriesByType('navigation')[0];
const ttfb_ms = !navigation ? missing('ttfb_ms', 'the page has no navigation timing entry')
  : navigation.responseStart > 0 ? round(Math.max(navigation.responseStart - (navigation.activationStart || 0), 0))
  : missing('ttfb_ms', 'the response has not started');
const contentful = paints && paints.find((entry) => entry.name === 'first-contentful-paint');
const fcp_ms = paints === null ? missing('fcp_ms', unsupported('paint'))
  : contentful ? round(contentful.startTime) : missing('fcp_ms', 'the page has not painted any content yet');
const lcp_ms = largest === null ? missing('lcp_ms', unsupported('largest-contentful-paint'))
  : largest.length ? round(largest[largest.length - 1].startTime) : missing('lcp_ms', 'no largest-contentful-paint entry yet');
let cls = null;
if (shifts === null) missing('cls', unsupported('layout-shift'));
else {
  let worst = 0, current = 0, first = 0, last = 0;
  for (const shift of shifts.filter((entry) => !entry.hadRecentInput)) {
    if (current && shift.startTime - last < 1000 && shift.startTime - first < 5000) current += shift.value;
    else { current = shift.value; first = shift.startTime; }
    last = shift.startTime;
    worst = Math.max(worst, current);
  }
  cls = Math.round(worst * 10000) / 10000;
}
return { url: location.href, ttfb_ms, fcp_ms, lcp_ms, cls, not_measured };
"#;
