//! TLS for the proxy: a certificate authority made per data directory (its key, mode 0600,
//! never leaves it) that mints a leaf per host for the page side, and the client side that
//! verifies every upstream certificate against the system's roots itself (plus, for tests
//! only, one more CA named by `MALO_TEST_EXTRA_CA`).
//!
//! The page's WebKit context accepts the proxy's leaves (its TLS error policy is "ignore"
//! on a context whose every connection goes through the proxy): the proxy is then the one
//! that decides, and it never accepts an upstream certificate the system would not.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    SerialNumber,
};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// The environment variable that adds a CA to what the proxy trusts upstream. For tests
/// only: it makes the proxy accept servers the system does not trust.
pub const TEST_EXTRA_CA_ENV: &str = "MALO_TEST_EXTRA_CA";

/// The CA's subject; the reloaded issuer must encode it exactly as the saved certificate.
const CA_NAME: &str = "malo-browser session proxy";
/// Leaves a CA keeps minted, per host.
const LEAF_CACHE: usize = 4096;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The crypto every TLS config of the proxy uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The proxy's certificate authority.
pub struct CertAuthority {
    issuer: Issuer<'static, KeyPair>,
    ca_der: CertificateDer<'static>,
    leaf_key: KeyPair,
    leaf_signer: Arc<dyn rustls::sign::SigningKey>,
    // A std mutex: a map lookup or insert.
    cache: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for CertAuthority {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CertAuthority")
    }
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, CA_NAME);
    name.push(DnType::OrganizationName, "malo-browser");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    params
}

fn random_serial() -> SerialNumber {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    SerialNumber::from_slice(&bytes)
}

/// Writes `bytes` to `path` with mode 0600 (through a temporary file).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let temporary = path.with_extension("tmp");
    let _ = std::fs::remove_file(&temporary);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

impl CertAuthority {
    /// The CA of `dir` (`proxy-ca.key.pem`, mode 0600, and `proxy-ca.cert.pem`), made on
    /// first use; a key that does not match its certificate is replaced.
    pub fn load_or_create(dir: &Path, provider: &CryptoProvider) -> Result<CertAuthority, BoxError> {
        use std::os::unix::fs::PermissionsExt;
        let (key_path, cert_path) = (dir.join("proxy-ca.key.pem"), dir.join("proxy-ca.cert.pem"));
        let loaded = match (std::fs::read_to_string(&key_path), std::fs::read_to_string(&cert_path)) {
            (Ok(key_pem), Ok(cert_pem)) => {
                std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600))?;
                let key = KeyPair::from_pem(&key_pem)?;
                let der = CertificateDer::from_pem_slice(cert_pem.as_bytes())?;
                let consistent =
                    CertifiedKey::from_der(vec![der.clone()], PrivateKeyDer::Pkcs8(key.serialize_der().into()), provider).is_ok();
                consistent.then_some((key, der))
            }
            _ => None,
        };
        let (ca_key, ca_der) = match loaded {
            Some(loaded) => loaded,
            None => {
                std::fs::create_dir_all(dir)?;
                let key = KeyPair::generate()?;
                let mut params = ca_params();
                let now = time::OffsetDateTime::now_utc();
                params.not_before = now - time::Duration::days(1);
                params.not_after = now + time::Duration::days(3650);
                params.serial_number = Some(random_serial());
                let certificate = params.self_signed(&key)?;
                write_private(&key_path, key.serialize_pem().as_bytes())?;
                std::fs::write(&cert_path, certificate.pem())?;
                (key, certificate.der().clone())
            }
        };
        let issuer = Issuer::new(ca_params(), ca_key);
        let leaf_key = KeyPair::generate()?;
        let leaf_signer = provider.key_provider.load_private_key(PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()))?;
        Ok(CertAuthority { issuer, ca_der, leaf_key, leaf_signer, cache: Mutex::default() })
    }

    /// A leaf for `host` (a DNS name or an IP address), minted once and kept.
    pub fn leaf_for(&self, host: &str) -> Result<Arc<CertifiedKey>, rcgen::Error> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(found) = self.cache.lock().expect("leaf cache poisoned").get(&host) {
            return Ok(found.clone());
        }
        let mut params = CertificateParams::new(vec![host.clone()])?;
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, host.as_str());
        params.distinguished_name = name;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        // One key signs every leaf: serials must still differ.
        params.serial_number = Some(random_serial());
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(1);
        params.not_after = now + time::Duration::days(90);
        let certificate = params.signed_by(&self.leaf_key, &self.issuer)?;
        let certified = Arc::new(CertifiedKey::new(vec![certificate.der().clone(), self.ca_der.clone()], self.leaf_signer.clone()));
        let mut cache = self.cache.lock().expect("leaf cache poisoned");
        if cache.len() >= LEAF_CACHE {
            cache.clear();
        }
        Ok(cache.entry(host).or_insert(certified).clone())
    }
}

/// Picks the leaf of a tunnel: the name the page asked for (SNI), else the CONNECT host
/// (pages send no SNI for an IP address).
#[derive(Debug)]
struct TunnelResolver {
    ca: Arc<CertAuthority>,
    host: String,
}

impl ResolvesServerCert for TunnelResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name().unwrap_or(&self.host);
        self.ca.leaf_for(name).map_err(|error| tracing::warn!(%error, "cannot mint a certificate")).ok()
    }
}

/// The page side of a tunnel to `host`: HTTP/1.1 only, our leaf for it.
pub fn server_config(provider: Arc<CryptoProvider>, ca: Arc<CertAuthority>, host: &str) -> Result<Arc<ServerConfig>, BoxError> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(TunnelResolver { ca, host: host.to_string() }));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The upstream side: the system's roots (and the test-only extra CA), HTTP/1.1.
pub fn client_config(provider: Arc<CryptoProvider>) -> Result<Arc<ClientConfig>, BoxError> {
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for error in &native.errors {
        tracing::warn!(%error, "a system CA could not be read");
    }
    let (added, ignored) = roots.add_parsable_certificates(native.certs);
    tracing::debug!(added, ignored, "system roots for the session proxy");
    if let Some(path) = std::env::var_os(TEST_EXTRA_CA_ENV) {
        tracing::warn!(path = %Path::new(&path).display(), "{TEST_EXTRA_CA_ENV} is set: the proxy also trusts this CA (for tests only)");
        for certificate in CertificateDer::pem_file_iter(&path)? {
            roots.add(certificate?)?;
        }
    }
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_made_once_kept_private_and_reloaded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("malo-ca-test-{}", crate::secret::random_hex(4)));
        let provider = provider();
        let first = CertAuthority::load_or_create(&dir, &provider).unwrap();
        let mode = std::fs::metadata(dir.join("proxy-ca.key.pem")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let again = CertAuthority::load_or_create(&dir, &provider).unwrap();
        assert_eq!(first.ca_der, again.ca_der, "the same CA on the next start");
        let leaf = again.leaf_for("example.test").unwrap();
        assert_eq!(leaf.cert.len(), 2, "leaf and CA");
        assert!(Arc::ptr_eq(&leaf, &again.leaf_for("EXAMPLE.test.").unwrap()), "minted once per host");
        assert!(again.leaf_for("127.0.0.1").is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
