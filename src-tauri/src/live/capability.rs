//! The capability in a live view's link: 256 random bits, written URL-safe (43 characters
//! of base64url), compared in constant time and never printed.

use std::fmt;

use base64::Engine as _;
use subtle::ConstantTimeEq;

/// Bytes of a capability.
const BYTES: usize = 32;
/// Characters of a written capability (base64url of 32 bytes, no padding).
pub(super) const LENGTH: usize = 43;

/// A live view's key.
#[derive(Clone)]
pub(crate) struct Capability([u8; BYTES]);

impl Capability {
    /// A fresh one from the operating system's random source.
    pub(crate) fn generate() -> Capability {
        let mut bytes = [0u8; BYTES];
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        Capability(bytes)
    }

    /// Reads a written capability: exactly 43 base64url characters (anything else, a
    /// shortened or padded one included, is none).
    pub(crate) fn parse(text: &str) -> Option<Capability> {
        if text.len() != LENGTH || !text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_') {
            return None;
        }
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
        Some(Capability(bytes.try_into().ok()?))
    }

    /// Its written form, for the one answer that hands the link out.
    pub(crate) fn expose(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.0)
    }

    /// Whether `other` is the same key, in time independent of where they differ.
    pub(crate) fn matches(&self, other: &Capability) -> bool {
        bool::from(self.0.ct_eq(&other.0))
    }
}

impl fmt::Debug for Capability {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Capability([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_reads_back_and_matches_only_itself() {
        let first = Capability::generate();
        let written = first.expose();
        assert_eq!(written.len(), LENGTH);
        assert!(Capability::parse(&written).is_some_and(|read| read.matches(&first)));
        assert!(!Capability::generate().matches(&first));
        assert!(Capability::parse(&written[..LENGTH - 1]).is_none(), "a shortened one");
        assert!(Capability::parse(&format!("{written}=")).is_none(), "a padded one");
        assert!(Capability::parse(&format!("{}!", &written[..LENGTH - 1])).is_none(), "a foreign character");
        assert!(!format!("{first:?}").contains(&written));
    }
}
