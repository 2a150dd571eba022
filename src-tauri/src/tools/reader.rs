//! `read`: the page as a reader mode shows it. The page agent chooses the main content (its
//! text density, its class names, its links; navigation, banners, sidebars and footers left
//! out) and renders it as Markdown blocks: headings, paragraphs, list items, quotes, code,
//! table rows, links. The answer holds the blocks that fit a budget of estimated tokens,
//! paged like a snapshot (`next`). With `url`, that page is loaded in the tab first.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::{LOAD_TIMEOUT_MS, NAVIGATION_SETTLE_MS, SNAPSHOT_MAX_TOKENS, SNAPSHOT_MIN_TOKENS};
use super::page_agent::agent;
use super::snapshot::budget::{cut, fingerprint, resume, Cursor};
use super::snapshot::tokens::estimate;
use super::{Positional, Presentation, Tool, ToolContext};
use crate::engine::agent::{ReadAnswer, ReadBlock, ReadPage};
use crate::engine::TabRequest;
use crate::error::{Error, Result};

/// Tokens kept aside from the budget for the notes around the blocks (where the part
/// starts, how to go on).
const NOTES_TOKENS: usize = 80;

/// Input of `read`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// Load this http(s) URL in the tab first, as navigate does.
    #[serde(default)]
    url: Option<String>,
    /// Go on where a cut answer stopped: its `truncated.next`.
    #[serde(default)]
    next: Option<String>,
    /// Estimated o200k tokens of one answer (default 12000, 500-200000); longer content is
    /// answered in parts.
    #[serde(default)]
    #[schemars(range(min = SNAPSHOT_MIN_TOKENS, max = SNAPSHOT_MAX_TOKENS.max))]
    max_tokens: Option<usize>,
}

/// Output of `read`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ReadOutput {
    /// `text`: `text` is the answer as people and models read it.
    format: &'static str,
    /// The page's URL.
    url: String,
    /// Its title.
    title: String,
    /// The main content (this part of it) as Markdown.
    text: String,
    /// Blocks (headings, paragraphs, list items, table rows) of the whole content.
    blocks: usize,
    /// The last block `next` named was not found again: the page changed there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    page_changed: bool,
    /// Present when the content goes on past this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<ReadTruncated>,
}

/// Where an answer of `read` stopped.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ReadTruncated {
    /// The first block shown.
    from: usize,
    /// Blocks shown.
    shown: usize,
    /// Give this as `next` for the rest.
    next: String,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "read",
        "Read the page's main content as Markdown (headings, lists, links, tables; navigation, sidebars and footers left out), as reader modes do; with url, load it first. Paged by max_tokens like snapshot (truncated.next).",
        |context: ToolContext, input: ReadInput| async move { read(&context, input).await },
    )
    .positional(&[Positional::Field("url")])
    .presented(Presentation { text_field: Some("text"), ..Presentation::default() })
}

async fn read(context: &ToolContext, input: ReadInput) -> Result<ReadOutput> {
    let budget = SNAPSHOT_MAX_TOKENS
        .read(input.max_tokens, "max_tokens")
        .map_err(|error| error.with_details(serde_json::json!({ "field": "max_tokens" })))?;
    if budget < SNAPSHOT_MIN_TOKENS {
        return Err(refused("max_tokens", &format!("must be at least {SNAPSHOT_MIN_TOKENS}")));
    }
    let cursor = match input.next.as_deref() {
        Some(next) => Some(Cursor::decode(next).map_err(|_| refused("next", "is not a cursor; give the truncated.next of a cut read"))?),
        None => None,
    };
    if input.url.is_some() && cursor.is_some() {
        return Err(refused("next", "goes on reading the page as it is; give no url with it"));
    }
    if let Some(url) = &input.url {
        let url = crate::urls::check_navigation_url(url)?;
        let (timeout, settle) = (LOAD_TIMEOUT_MS.millis(None, "timeout_ms")?, NAVIGATION_SETTLE_MS.millis(None, "settle_ms")?);
        let _: crate::engine::NavigationReport = context.ask(TabRequest::Navigate { url: url.to_string(), timeout, settle }).await?;
    }
    let answer = agent(context, &[], &ReadPage {}).await?;
    Ok(part(answer, cursor, budget))
}

/// The part of the content that starts at `cursor` (the beginning without one) and fits
/// `budget`.
fn part(answer: ReadAnswer, cursor: Option<Cursor>, budget: usize) -> ReadOutput {
    let ReadAnswer { url, title, blocks, cut: agent_cut } = answer;
    let fingerprints: Vec<u32> = blocks.iter().map(|block| fingerprint(block.md.as_bytes())).collect();
    let (from, page_changed) = match cursor {
        Some(cursor) => resume(&fingerprints, cursor),
        None => (0, false),
    };
    let head = blocks.get(from).and_then(|block| block.head).and_then(|head| blocks.get(head)).filter(|_| from > 0);
    let head_cost = head.map_or(0, |head| estimate(&head.md) + 1);
    let costs: Vec<usize> = blocks.iter().map(|block| estimate(&block.md) + 1).collect();
    let room = budget.saturating_sub(NOTES_TOKENS + head_cost);
    let end = if from < blocks.len() { cut(&costs, from, room, |index| blocks[index].opens) } else { from };
    let mut text = String::new();
    if from > 0 {
        text.push_str(&format!("(continued from block {from} of {}", blocks.len()));
        if page_changed {
            text.push_str("; the page changed where the previous part ended: blocks may repeat or be missing");
        }
        text.push_str(")\n\n");
    }
    if let Some(head) = head {
        text.push_str(&head.md);
        text.push('\n');
    }
    join(&mut text, &blocks[from..end], head.is_some());
    let truncated = (end < blocks.len()).then(|| ReadTruncated {
        from,
        shown: end - from,
        next: Cursor { index: end, anchor: fingerprints[end - 1] }.encode(),
    });
    if let Some(truncated) = &truncated {
        text.push_str(&format!(
            "\n\n(cut at the token budget: blocks {end}-{} of {} not shown yet; read {{\"next\": \"{}\"}} goes on)",
            blocks.len() - 1,
            blocks.len(),
            truncated.next
        ));
    } else if agent_cut {
        text.push_str("\n\n(the content goes on past what one read can hold)");
    }
    if blocks.is_empty() {
        text.push_str("(no readable content)");
    }
    ReadOutput { format: "text", url, title, text, blocks: blocks.len(), page_changed, truncated }
}

/// Appends blocks: a blank line between them, a line break only before a tight one (a
/// list item, a table row), or before the first when it goes on a repeated table head.
fn join(text: &mut String, blocks: &[ReadBlock], after_head: bool) {
    for (index, block) in blocks.iter().enumerate() {
        if index > 0 {
            text.push_str(if block.tight { "\n" } else { "\n\n" });
        } else if after_head && !block.tight {
            text.push('\n');
        }
        text.push_str(&block.md);
    }
}

/// `E_BAD_REQUEST` naming the field.
fn refused(field: &str, message: &str) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(serde_json::json!({ "field": field }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(md: &str, tight: bool, opens: bool, head: Option<usize>) -> ReadBlock {
        ReadBlock { md: md.into(), tight, opens, head }
    }

    fn answer(blocks: Vec<ReadBlock>) -> ReadAnswer {
        ReadAnswer { url: "http://x.test/".into(), title: "T".into(), blocks, cut: false }
    }

    #[test]
    fn blocks_join_as_markdown_and_a_short_page_is_one_part() {
        let read = part(
            answer(vec![
                block("# Title", false, true, None),
                block("A paragraph.", false, false, None),
                block("- one", false, false, None),
                block("- two", true, false, None),
            ]),
            None,
            1000,
        );
        assert_eq!(read.text, "# Title\n\nA paragraph.\n\n- one\n- two");
        assert!(read.truncated.is_none());
        assert_eq!(read.blocks, 4);
    }

    #[test]
    fn paging_visits_every_block_once_and_repeats_a_tables_head() {
        let mut blocks = vec![block("# Rows", false, true, None), block("| a | b |\n| --- | --- |", false, true, None)];
        for row in 0..400 {
            blocks.push(block(&format!("| cell number {row} | another cell with words {row} |"), true, false, Some(1)));
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let read = part(answer(blocks.clone()), cursor, 500);
            for line in read.text.lines().filter(|line| line.starts_with("| cell number")) {
                seen.push(line.to_string());
            }
            let Some(truncated) = read.truncated else { break };
            if truncated.from > 0 {
                assert!(read.text.contains("| a | b |\n| --- | --- |\n| cell"), "{}", read.text);
            }
            assert!(read.text.contains(&truncated.next));
            cursor = Some(Cursor::decode(&truncated.next).unwrap());
        }
        let expected: Vec<String> = (0..400).map(|row| format!("| cell number {row} | another cell with words {row} |")).collect();
        assert_eq!(seen, expected);
    }
}
