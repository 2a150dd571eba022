//! Numbers as agents write them. The list tools' cursors, limits and numeric filters take
//! a JSON number or a string of digits (`50` or `"50"`): models, shells and query strings
//! send either, and refusing one of them costs an agent a round trip for nothing.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// An optional non-negative integer written as a number or a string of digits. A field
/// takes it with `#[serde(default, with = "Lenient")]`, one attribute for both sides:
/// serde reads the field with [`Lenient::deserialize`], and schemars, which takes serde's
/// `with` as the type that describes the field, gives it [`Lenient`]'s schema.
pub(crate) struct Lenient;

impl Lenient {
    /// Reads the field: a number or a string of digits that fits `T`, or null.
    pub(crate) fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }

    /// Writes the field as a plain number or null (schemars writes a field's default, null,
    /// with it).
    pub(crate) fn serialize<S: Serializer, T: Serialize>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }
}

/// The schema of a lenient count or cursor: an integer, or a string of digits.
impl schemars::JsonSchema for Lenient {
    fn schema_name() -> Cow<'static, str> {
        "Lenient".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["integer", "string"], "minimum": 0, "pattern": "^\\s*[0-9]+\\s*$" })
    }
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

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::Lenient;

    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    struct Input {
        #[serde(default, with = "Lenient")]
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

    #[test]
    fn the_one_attribute_gives_the_field_its_lenient_schema_too() {
        let schema = serde_json::to_value(schemars::schema_for!(Input)).unwrap();
        let limit = &schema["properties"]["limit"];
        assert_eq!((&limit["type"], &limit["pattern"]), (&json!(["integer", "string"]), &json!("^\\s*[0-9]+\\s*$")), "{schema}");
        assert!(schema.get("required").is_none() && schema.get("$defs").is_none(), "optional, and inlined: {schema}");
    }
}
