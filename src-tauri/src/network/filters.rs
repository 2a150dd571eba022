//! The filters of `requests`: URL, method, status (a code or a class), resource type,
//! failures only.

use serde::Deserialize;

use super::records::{RequestRecord, ResourceType};

/// The filters of `requests`.
#[derive(Debug, Clone, Default)]
pub struct RequestFilter {
    /// URL contains.
    pub url_includes: Option<String>,
    /// Method (any case).
    pub method: Option<String>,
    /// A status or a class.
    pub status: Option<StatusFilter>,
    /// A resource type.
    pub resource_type: Option<ResourceType>,
    /// Only failed or blocked requests.
    pub failed_only: bool,
}

impl RequestFilter {
    /// Whether a record passes every filter.
    pub fn admits(&self, record: &RequestRecord) -> bool {
        self.url_includes.as_deref().is_none_or(|part| record.url.contains(part))
            && self.method.as_deref().is_none_or(|method| method.eq_ignore_ascii_case(&record.method))
            && self.resource_type.is_none_or(|kind| kind == record.resource_type)
            && (!self.failed_only || record.failed())
            && self.status.is_none_or(|wanted| wanted.admits(record.status))
    }
}

/// A `status` filter: one code (`404`, `"404"`) or a class (`"4xx"`), as agents and
/// people write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    /// Exactly this status.
    Exact(u16),
    /// Every status of this hundred (`4` for 400-499).
    Class(u16),
}

impl StatusFilter {
    /// Whether a record's status passes.
    pub fn admits(self, status: Option<u16>) -> bool {
        match (self, status) {
            (StatusFilter::Exact(wanted), Some(status)) => wanted == status,
            (StatusFilter::Class(class), Some(status)) => status / 100 == class,
            (_, None) => false,
        }
    }
}

impl std::str::FromStr for StatusFilter {
    type Err = String;

    fn from_str(text: &str) -> Result<StatusFilter, String> {
        let wanted = text.trim().to_ascii_lowercase();
        let refused = || format!("status is a code such as 404 or a class such as \"4xx\", not {text:?}");
        match wanted.strip_suffix("xx") {
            Some(class) if class.len() == 1 => match class.parse::<u16>() {
                Ok(class) if (1..=5).contains(&class) => Ok(StatusFilter::Class(class)),
                _ => Err(refused()),
            },
            Some(_) => Err(refused()),
            None if wanted.len() == 3 => match wanted.parse::<u16>() {
                Ok(code) if (100..=599).contains(&code) => Ok(StatusFilter::Exact(code)),
                _ => Err(refused()),
            },
            None => Err(refused()),
        }
    }
}

impl<'de> Deserialize<'de> for StatusFilter {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<StatusFilter, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "expected a status (404 or \"404\") or a class (\"4xx\")")]
        enum Written {
            Number(u64),
            Text(String),
        }
        let text = match Written::deserialize(deserializer)? {
            Written::Number(number) => number.to_string(),
            Written::Text(text) => text,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for StatusFilter {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StatusFilter".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A status (404 or \"404\") or a class (\"4xx\").",
            "anyOf": [
                { "type": "integer", "minimum": 100, "maximum": 599 },
                { "type": "string", "pattern": "^\\s*([1-5][0-9][0-9]|[1-5][xX][xX])\\s*$" }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn filters_and_status_classes() {
        let parse = |text: &str| text.parse::<StatusFilter>();
        assert!(parse("4xx").unwrap().admits(Some(404)) && !parse("4xx").unwrap().admits(Some(500)));
        assert!(parse("204").unwrap().admits(Some(204)) && !parse("2xx").unwrap().admits(None));
        for good in ["404", "4xx", "5XX", "200", " 301 "] {
            assert!(parse(good).is_ok(), "{good}");
        }
        for bad in ["", "4x", "40", "xx", "9xx", "abc", "1000", "099", "600"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let from_json = |value: Value| serde_json::from_value::<StatusFilter>(value);
        assert_eq!(from_json(json!(200)).unwrap(), StatusFilter::Exact(200));
        assert_eq!(from_json(json!("200")).unwrap(), StatusFilter::Exact(200));
        assert_eq!(from_json(json!("4xx")).unwrap(), StatusFilter::Class(4));
        assert!(from_json(json!(42)).is_err() && from_json(json!(true)).is_err());
    }
}
