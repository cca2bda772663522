//! The pool credential: a private certificate authority shared by every
//! node of a pool. Each node certifies a fresh key of its own with it at
//! start and connections use mutual TLS, so only holders of the credential
//! can connect, steal or publish.
//!
//! The credential is one PEM file (the CA certificate and its key), made by
//! [`init_pool`]. Treat it like a password: copy it to the other machines
//! over a channel you trust (scp, a secrets manager) and pass it with
//! `--pool FILE` or the `SATIN_POOL` environment variable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The name every node's certificate carries and every client checks.
pub(crate) const SERVER_NAME: &str = "satin-pool";
/// ALPN protocol id: a QUIC peer speaking something else is refused early.
pub(crate) const ALPN: &[u8] = b"satin/1";
/// File name used inside a pool directory.
pub const POOL_FILE: &str = "pool.pem";

/// Why the credential could not be made or used.
#[derive(Debug)]
pub struct PoolError(pub String);

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PoolError {}

fn err(what: impl std::fmt::Display) -> PoolError {
    PoolError(what.to_string())
}

/// A loaded pool credential.
pub struct Pool {
    ca_der: CertificateDer<'static>,
    ca_key: KeyPair,
}

fn ca_params() -> CertificateParams {
    // Fixed parameters: the issuer is rebuilt from them and the key on every
    // node, so no certificate parser is needed.
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "satin pool authority");
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    params
}

/// Makes a new pool credential and writes it to `path` (a file, or a
/// directory that gets [`POOL_FILE`]), readable by the owner only. Refuses
/// to overwrite an existing file.
pub fn init_pool(path: &Path) -> Result<PathBuf, PoolError> {
    let file = if path.is_dir() { path.join(POOL_FILE) } else { path.to_path_buf() };
    if file.exists() {
        return Err(err(format!("{} exists; not overwriting a pool credential", file.display())));
    }
    let key = KeyPair::generate().map_err(err)?;
    let cert = ca_params().self_signed(&key).map_err(err)?;
    let pem = format!("{}{}", cert.pem(), key.serialize_pem());
    write_private(&file, pem.as_bytes()).map_err(|e| err(format!("cannot write {}: {e}", file.display())))?;
    Ok(file)
}

fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(file)?;
    f.write_all(bytes)
}

impl Pool {
    /// Loads a credential from a file made by [`init_pool`] (or a directory
    /// holding [`POOL_FILE`]).
    pub fn load(path: &Path) -> Result<Pool, PoolError> {
        let file = if path.is_dir() { path.join(POOL_FILE) } else { path.to_path_buf() };
        let pem = super::retry::retry(
            super::retry::LOCAL_OPERATIONS,
            || std::fs::read(&file),
            |e| super::retry::transient(e.kind()),
            |e, wait| tracing::warn!("cannot read pool credential {} ({e}); trying again in {wait:?}", file.display()),
        )
        .map_err(|e| err(format!("cannot read pool credential {}: {e}", file.display())))?;
        Pool::from_pem(&pem).map_err(|e| err(format!("{}: {e}", file.display())))
    }

    /// A credential made up for this process alone (a run of one node).
    pub fn ephemeral() -> Result<Pool, PoolError> {
        let key = KeyPair::generate().map_err(err)?;
        let cert = ca_params().self_signed(&key).map_err(err)?;
        Pool::from_pem(format!("{}{}", cert.pem(), key.serialize_pem()).as_bytes())
    }

    /// Parses the PEM text of a credential.
    pub fn from_pem(pem: &[u8]) -> Result<Pool, PoolError> {
        let ca_der = CertificateDer::from_pem_slice(pem).map_err(|e| err(format!("no CA certificate: {e:?}")))?;
        let key_der = PrivatePkcs8KeyDer::from_pem_slice(pem).map_err(|e| err(format!("no CA key: {e:?}")))?;
        let ca_key = KeyPair::try_from(&key_der).map_err(|e| err(format!("bad CA key: {e}")))?;
        Ok(Pool { ca_der, ca_key })
    }

    /// The pool's fingerprint: 16 hex digits of a hash of its certificate
    /// authority's certificate, the same on every node of the pool and
    /// different for another pool (said by `--init-pool`, and in the error
    /// when nodes of two pools meet).
    pub fn fingerprint(&self) -> String {
        let hash = blake3::hash(&self.ca_der);
        hash.as_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A fresh key for this node, certified by the pool; it names the
    /// pool's fingerprint too (see `pool_check.rs`).
    fn node_identity(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), PoolError> {
        let key = KeyPair::generate().map_err(err)?;
        let names = vec![SERVER_NAME.to_string(), super::pool_check::pool_name(&self.fingerprint())];
        let mut params = CertificateParams::new(names).map_err(err)?;
        // Every node is both a server and a client of its peers.
        params.extended_key_usages =
            vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth, rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let issuer = Issuer::new(ca_params(), &self.ca_key);
        let cert = params.signed_by(&key, &issuer).map_err(err)?;
        let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        Ok((vec![cert.der().clone()], key_der))
    }

    fn roots(&self) -> Result<Arc<rustls::RootCertStore>, PoolError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca_der.clone()).map_err(err)?;
        Ok(Arc::new(roots))
    }

    /// QUIC server and client configurations for one node: both sides
    /// present a pool certificate and accept only pool certificates.
    pub(crate) fn quic_configs(&self) -> Result<(quinn::ServerConfig, quinn::ClientConfig), PoolError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = self.roots()?;
        let (chain, key) = self.node_identity()?;

        let fingerprint = self.fingerprint();
        let inner = rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(err)?;
        let verifier = Arc::new(super::pool_check::Clients { inner, fingerprint: fingerprint.clone() });
        let mut server = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(err)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain.clone(), key.clone_key())
            .map_err(err)?;
        server.alpn_protocols = vec![ALPN.to_vec()];

        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(err)?;
        let servers = Arc::new(super::pool_check::Servers { inner, fingerprint });
        let mut client = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(err)?
            .dangerous()
            .with_custom_certificate_verifier(servers)
            .with_client_auth_cert(chain, key)
            .map_err(err)?;
        client.alpn_protocols = vec![ALPN.to_vec()];

        let server = quinn::crypto::rustls::QuicServerConfig::try_from(server).map_err(err)?;
        let client = quinn::crypto::rustls::QuicClientConfig::try_from(client).map_err(err)?;
        Ok((quinn::ServerConfig::with_crypto(Arc::new(server)), quinn::ClientConfig::new(Arc::new(client))))
    }
}
