//! Bearer tokens: random, compared in constant time, never printed.
//!
//! `Token` deliberately implements neither `Display` nor a revealing `Debug`, so a
//! token cannot end up in a log line by accident; the one place that must show it
//! (the JSON handed to the client that owns it) calls [`Token::expose`].

use std::fmt;

use subtle::ConstantTimeEq;

/// A random 256-bit bearer token, as 64 lowercase hex characters.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from the operating system's random source.
    pub fn generate() -> Token {
        Token(random_hex(32))
    }

    /// The token's text, for the one response that hands it to its owner.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` equals this token, in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        // `ct_eq` on slices of different lengths returns false at once; the length of
        // a token is public (always 64), so that leaks nothing.
        bool::from(self.0.as_bytes().ct_eq(candidate.as_bytes()))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Token([redacted])")
    }
}

/// `bytes` random bytes as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the operating system's random source failed");
    buffer.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_match_only_themselves() {
        let first = Token::generate();
        let second = Token::generate();
        assert_ne!(first, second);
        assert_eq!(first.expose().len(), 64);
        assert!(first.matches(first.expose()));
        assert!(!first.matches(second.expose()));
        assert!(!first.matches(""));
        assert!(!first.matches(&first.expose()[..63]));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let token = Token::generate();
        let printed = format!("{token:?}");
        assert!(!printed.contains(token.expose()));
    }
}
