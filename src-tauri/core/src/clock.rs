//! Wall-clock time as the API writes it: RFC 3339, UTC, milliseconds (`2026-11-03T10:00:00.000Z`).

use std::time::{Duration, SystemTime};

use time::{format_description::FormatItem, macros::format_description, OffsetDateTime};

const API_TIME: &[FormatItem<'static>] = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// `time` formatted for the API.
pub fn format(time: SystemTime) -> String {
    OffsetDateTime::from(time).format(API_TIME).expect("a UTC time always formats")
}

/// Now, formatted for the API.
pub fn now() -> String {
    format(SystemTime::now())
}

/// `delay` from now, formatted for the API.
pub fn after(delay: Duration) -> String {
    format(SystemTime::now() + delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_and_z() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_793_700_000_123);
        assert_eq!(format(time), "2026-11-03T10:00:00.123Z");
    }
}
