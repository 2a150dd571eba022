//! The defaults and limits of tool inputs, each defined once: the handlers read inputs
//! through these constants and the input schemas' `range(max = ...)` name the same ones.
//! The numbers are written here once; an input's doc comment (its schema's description,
//! read by people and models) repeats them: change both together.

use std::fmt::Display;
use std::time::Duration;

use crate::error::{Error, Result};

/// An optional numeric input: the value used when it is not given, and the most it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounded<T> {
    /// Used when the input does not give the field.
    pub(crate) default: T,
    /// Anything above is refused (`E_BAD_REQUEST`, "`field` must be at most `max`").
    pub(crate) max: T,
}

impl<T: PartialOrd + Copy + Display> Bounded<T> {
    /// The given value, or the default; refused above the maximum.
    pub(crate) fn read(self, value: Option<T>, field: &str) -> Result<T> {
        let value = value.unwrap_or(self.default);
        if value > self.max {
            return Err(Error::bad_request(format!("{field} must be at most {}", self.max)));
        }
        Ok(value)
    }
}

impl Bounded<u8> {
    /// Checks a given value of at least 1 (a quality): 0 and anything above the maximum are
    /// refused.
    pub(crate) fn check(self, value: u8, field: &str) -> Result<u8> {
        if value == 0 || value > self.max {
            return Err(Error::bad_request(format!("{field} must be between 1 and {}", self.max)));
        }
        Ok(value)
    }
}

impl Bounded<u64> {
    /// [`Bounded::read`] for a number of milliseconds.
    pub(crate) fn millis(self, value: Option<u64>, field: &str) -> Result<Duration> {
        self.read(value, field).map(Duration::from_millis)
    }
}

impl Bounded<usize> {
    /// [`Bounded::read`] for a count of at least 1 (the `limit` of a list): 0 is refused too.
    pub(crate) fn count(self, value: Option<usize>, field: &str) -> Result<usize> {
        let count = self.read(value, field)?;
        if count == 0 {
            return Err(Error::bad_request(format!("{field} must be at least 1")));
        }
        Ok(count)
    }
}

/// `settle_ms` of actions: how long to wait for what the action caused (also the settle
/// of `login` and `set_file_input`, which take no `settle_ms`).
pub(crate) const ACTION_SETTLE_MS: Bounded<u64> = Bounded { default: 1500, max: 30_000 };
/// `timeout_ms` of actions: how long to wait for the element to be actionable.
pub(crate) const ACTIONABLE_TIMEOUT_MS: Bounded<u64> = Bounded { default: 5000, max: 120_000 };
/// `timeout_ms` of `wait_for`.
pub(crate) const WAIT_FOR_TIMEOUT_MS: Bounded<u64> = Bounded { default: 5000, max: 120_000 };
/// `ms` of `sleep` (required: the default is never used).
pub(crate) const SLEEP_MS: Bounded<u64> = Bounded { default: 0, max: 60_000 };
/// `delay_ms` of `type`: the pause between two characters.
pub(crate) const TYPE_DELAY_MS: Bounded<u64> = Bounded { default: 0, max: 1000 };
/// Longest text `type` takes in one call (characters).
pub(crate) const MAX_TYPED_CHARS: usize = 10_000;
/// `click_count` of `click`: a single, double or triple click.
pub(crate) const CLICK_COUNT: Bounded<u8> = Bounded { default: 1, max: 3 };

/// `timeout_ms` of `navigate` and `history`: the load itself (`tab_new` always waits the
/// default).
pub(crate) const LOAD_TIMEOUT_MS: Bounded<u64> = Bounded { default: 30_000, max: 120_000 };
/// `settle_ms` of `navigate`, `history` and `tab_new`: DOM and network quiet after load.
pub(crate) const NAVIGATION_SETTLE_MS: Bounded<u64> = Bounded { default: 3000, max: 60_000 };

/// `timeout_ms` of `assert`.
pub(crate) const ASSERT_TIMEOUT_MS: Bounded<u64> = Bounded { default: 5000, max: 60_000 };
/// `timeout_ms` of `wait_for_event`.
pub(crate) const WAIT_FOR_EVENT_TIMEOUT_MS: Bounded<u64> = Bounded { default: 30_000, max: 300_000 };
/// The most `timeout_ms` of `login` may be, in either mode.
pub(crate) const LOGIN_TIMEOUT_MAX_MS: u64 = 600_000;
/// `timeout_ms` of `login` in password mode.
pub(crate) const LOGIN_PASSWORD_TIMEOUT_MS: Bounded<u64> = Bounded { default: 15_000, max: LOGIN_TIMEOUT_MAX_MS };
/// `timeout_ms` of `login` in watch mode, where a person types.
pub(crate) const LOGIN_WATCH_TIMEOUT_MS: Bounded<u64> = Bounded { default: 180_000, max: LOGIN_TIMEOUT_MAX_MS };

/// `quality` of `screenshot` (JPEG and WebP): 1 to 100.
pub(crate) const SCREENSHOT_QUALITY: Bounded<u8> = Bounded { default: 80, max: 100 };
/// The longest side of a `screenshot`, in CSS px: a full page stops there (`truncated`).
pub(crate) const SCREENSHOT_MAX_SIDE: u32 = 16_384;

/// `max_chars` of `observe`: visible text in the summary.
pub(crate) const OBSERVE_MAX_CHARS: Bounded<usize> = Bounded { default: 2000, max: 100_000 };
/// `max_chars` of `extract`: characters per value.
pub(crate) const EXTRACT_MAX_CHARS: Bounded<usize> = Bounded { default: 4000, max: 200_000 };
/// `max_tokens` of `snapshot`: the estimated o200k tokens of one answer; a page that needs
/// more is answered in parts.
pub(crate) const SNAPSHOT_MAX_TOKENS: Bounded<usize> = Bounded { default: 12_000, max: 200_000 };
/// The least `max_tokens` of `snapshot` may be: room for the header and a few lines.
pub(crate) const SNAPSHOT_MIN_TOKENS: usize = 500;
/// The most `max_chars` of `snapshot` may be (page text; 0 = none; by default all of it).
pub(crate) const SNAPSHOT_MAX_CHARS: usize = 200_000;
/// The most `max_items` of `snapshot` may be (entries per list, at least 1; by default all).
pub(crate) const SNAPSHOT_MAX_ITEMS: usize = 5000;
/// `limit` of `list_downloads` (at least 1; at most the records a session keeps).
pub(crate) const LIST_DOWNLOADS_LIMIT: Bounded<usize> = Bounded { default: 20, max: crate::state::downloads::MAX_DOWNLOAD_RECORDS };
/// `limit` of `events` (at least 1).
pub(crate) const EVENTS_LIMIT: Bounded<usize> = Bounded { default: 200, max: 1000 };
/// Steps of one `run_steps` (at least 1).
pub(crate) const MAX_RUN_STEPS: usize = 200;
/// `limit` of `responses` (at least 1).
pub(crate) const RESPONSES_LIMIT: Bounded<usize> = Bounded { default: 50, max: 200 };
/// `limit` of `requests` (at least 1; at most the records a tab keeps).
pub(crate) const REQUESTS_LIMIT: Bounded<usize> = Bounded { default: 100, max: crate::network::TAB_REQUESTS };
/// `limit` of `console` (at least 1; at most the lines a tab keeps).
pub(crate) const CONSOLE_LIMIT: Bounded<usize> = Bounded { default: 50, max: crate::state::CONSOLE_ENTRIES };
/// `limit` of `page_errors` (at least 1; at most the errors a tab keeps).
pub(crate) const PAGE_ERRORS_LIMIT: Bounded<usize> = Bounded { default: 50, max: crate::state::ERROR_ENTRIES };
/// `url_prefixes` of `network_capture`: how many prefixes, and the characters of each.
pub(crate) const CAPTURE_PREFIXES: usize = 100;
/// See [`CAPTURE_PREFIXES`].
pub(crate) const CAPTURE_PREFIX_CHARS: usize = 2048;
/// The largest PDF `pdf` answers inline as base64 `data`, in bytes (10 MiB); a larger
/// one needs a `path`.
pub(crate) const PDF_INLINE_BYTES: u64 = 10 << 20;
/// The smallest and largest width and height of a custom paper of `pdf`, in millimetres.
pub(crate) const PDF_PAPER_MM: (f64, f64) = (10.0, 5000.0);
/// Of the paper's width and height, what margins must leave for the content, in millimetres.
pub(crate) const PDF_CONTENT_MIN_MM: f64 = 10.0;
/// The highest page number `page_ranges` of `pdf` may name.
pub(crate) const PDF_MAX_PAGE: u32 = 100_000;
/// Characters of `page_ranges` of `pdf`.
pub(crate) const PDF_PAGE_RANGES_CHARS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_input_takes_its_default_and_refuses_more_than_its_maximum() {
        assert_eq!(ACTION_SETTLE_MS.read(None, "settle_ms").unwrap(), 1500);
        assert_eq!(ACTION_SETTLE_MS.millis(Some(30_000), "settle_ms").unwrap(), Duration::from_secs(30));
        let refused = ACTION_SETTLE_MS.read(Some(30_001), "settle_ms").unwrap_err();
        assert_eq!(refused.message, "settle_ms must be at most 30000");
    }

    #[test]
    fn a_count_refuses_zero() {
        assert_eq!(RESPONSES_LIMIT.count(None, "limit").unwrap(), 50);
        assert_eq!(RESPONSES_LIMIT.count(Some(0), "limit").unwrap_err().message, "limit must be at least 1");
        assert_eq!(RESPONSES_LIMIT.count(Some(201), "limit").unwrap_err().message, "limit must be at most 200");
    }
}
