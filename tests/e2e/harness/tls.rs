//! HTTPS for the fixture routes: a certificate authority made for a test, the leaves it
//! signs, and an untrusted self-signed leaf.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::{DaemonOptions, Fixtures, TempDir};

/// A certificate authority made for a test, and leaves it signs for 127.0.0.1 and localhost.
pub struct TestCa {
    pub dir: TempDir,
    /// The CA certificate (PEM), for `MALO_TEST_EXTRA_CA`.
    pub ca_path: PathBuf,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let dir = TempDir::new("test-ca");
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name.push(rcgen::DnType::CommonName, "malo test CA");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
        let certificate = params.self_signed(&key).unwrap();
        let ca_path = dir.0.join("test-ca.pem");
        std::fs::write(&ca_path, certificate.pem()).unwrap();
        TestCa { dir, ca_path, issuer: rcgen::Issuer::new(params, key) }
    }

    /// Options for a daemon whose proxy trusts this CA upstream (`MALO_TEST_EXTRA_CA`).
    pub fn trusted_by_daemon(&self) -> DaemonOptions {
        DaemonOptions { env: vec![("MALO_TEST_EXTRA_CA".into(), self.ca_path.display().to_string())], ..DaemonOptions::default() }
    }

    /// A leaf for 127.0.0.1 and localhost, signed by this CA: `(certificate chain, key)`.
    fn leaf(&self) -> (Vec<rustls::pki_types::CertificateDer<'static>>, rustls::pki_types::PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        let certificate = params.signed_by(&key, &self.issuer).unwrap();
        (vec![certificate.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
    }
}

/// A leaf for 127.0.0.1 signed by nobody anyone trusts (self-signed).
fn untrusted_leaf() -> (Vec<rustls::pki_types::CertificateDer<'static>>, rustls::pki_types::PrivateKeyDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap().self_signed(&key).unwrap();
    (vec![certificate.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
}

impl Fixtures {
    /// The fixture routes over HTTPS, with a leaf of `ca` (or an untrusted one); answers the port.
    pub fn start_tls(&self, ca: Option<&TestCa>) -> u16 {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap());
        let (chain, key) = match ca {
            Some(ca) => ca.leaf(),
            None => untrusted_leaf(),
        };
        let mut config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = self.router();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (acceptor, router) = (acceptor.clone(), router.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else { return };
                    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let router = router.clone();
                        async move { tower::ServiceExt::oneshot(router, request.map(axum::body::Body::new)).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(tls), service).await;
                });
            }
        });
        port
    }
}
