//! Numbers as agents write them. The list tools' cursors, limits and numeric filters take
//! a JSON number or a string of digits (`50` or `"50"`): models, shells and query strings
//! send either, and refusing one of them costs an agent a round trip for nothing.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};

/// Deserializes an optional non-negative integer written as a number or a string of digits
/// (use with `#[serde(default, deserialize_with = "numbers::lenient")]`).
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    deserializer.deserialize_any(LenientVisitor(PhantomData))
}

struct LenientVisitor<T>(PhantomData<T>);

impl<T: TryFrom<u64>> LenientVisitor<T> {
    fn fits<E: de::Error>(number: u64) -> Result<Option<T>, E> {
        T::try_from(number).map(Some).map_err(|_| E::custom(format!("{number} is too large")))
    }
}

impl<'de, T: TryFrom<u64>> Visitor<'de> for LenientVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a non-negative integer, as a number or a string of digits")
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Option<T>, E> {
        Self::fits(number)
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Option<T>, E> {
        let number = u64::try_from(number).map_err(|_| E::custom(format!("{number} is negative; expected 0 or more")))?;
        Self::fits(number)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Option<T>, E> {
        let trimmed = text.trim();
        if trimmed.is_empty() || !trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(E::custom(format!("{text:?} is not a non-negative integer")));
        }
        let number = trimmed.parse::<u64>().map_err(|_| E::custom(format!("{text:?} is too large")))?;
        Self::fits(number)
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
}

/// The schema of a lenient count or cursor: an integer, or a string of digits.
pub(crate) fn lenient_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["integer", "string"], "minimum": 0, "pattern": "^\\s*[0-9]+\\s*$" })
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Input {
        #[serde(default, deserialize_with = "super::lenient")]
        limit: Option<usize>,
    }

    fn parse(value: serde_json::Value) -> Result<Option<usize>, String> {
        serde_json::from_value::<Input>(value).map(|input| input.limit).map_err(|error| error.to_string())
    }

    #[test]
    fn numbers_and_strings_of_digits_are_the_same_and_the_rest_is_refused_clearly() {
        assert_eq!(parse(json!({ "limit": 50 })), Ok(Some(50)));
        assert_eq!(parse(json!({ "limit": "50" })), Ok(Some(50)));
        assert_eq!(parse(json!({ "limit": " 7 " })), Ok(Some(7)));
        assert_eq!(parse(json!({})), Ok(None));
        assert_eq!(parse(json!({ "limit": null })), Ok(None));
        for bad in [json!(-1), json!("-1"), json!("ten"), json!(""), json!(true), json!(1.5), json!([1])] {
            let error = parse(json!({ "limit": bad })).unwrap_err();
            assert!(error.contains("integer") || error.contains("negative"), "{bad}: {error}");
        }
    }
}
