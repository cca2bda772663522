//! Telling a peer of another pool apart from a broken certificate. Every
//! node's certificate names its pool's fingerprint (an extra DNS name,
//! `pool-<fingerprint>.satin`); when a peer's certificate fails
//! verification, the error says, in words, which pool each side belongs
//! to — instead of rustls's `BadSignature`. The name is read only to word
//! the error: it is not trusted for anything.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};

/// The DNS name that carries a pool's fingerprint in its certificates.
pub(crate) fn pool_name(fingerprint: &str) -> String {
    format!("pool-{fingerprint}.satin")
}

/// The fingerprint a certificate names, if it names one (found by its
/// bytes: a DNS name is stored as plain text in the encoding).
fn named_fingerprint(cert: &[u8]) -> Option<String> {
    const PREFIX: &[u8] = b"pool-";
    const LEN: usize = 16;
    cert.windows(PREFIX.len() + LEN + 6).find_map(|w| {
        let (head, rest) = w.split_at(PREFIX.len());
        let (fp, tail) = rest.split_at(LEN);
        (head == PREFIX && tail == b".satin" && fp.iter().all(u8::is_ascii_hexdigit))
            .then(|| String::from_utf8_lossy(fp).into_owned())
    })
}

/// The error for a peer certificate that failed verification with `e`.
fn worded(e: Error, cert: &CertificateDer<'_>, ours: &str) -> Error {
    match named_fingerprint(cert) {
        Some(theirs) if theirs != ours => Error::General(format!(
            "the peer belongs to another pool: its pool credential has fingerprint {theirs}, this node's {ours} \
             (give every node the same --pool file)"
        )),
        _ => e,
    }
}

/// Verifies peers that connect to this node, wording a pool mismatch.
#[derive(Debug)]
pub(crate) struct Clients {
    pub(crate) inner: Arc<dyn ClientCertVerifier>,
    pub(crate) fingerprint: String,
}

impl ClientCertVerifier for Clients {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
            .map_err(|e| worded(e, end_entity, &self.fingerprint))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Verifies the peers this node connects to, wording a pool mismatch.
#[derive(Debug)]
pub(crate) struct Servers {
    pub(crate) inner: Arc<dyn ServerCertVerifier>,
    pub(crate) fingerprint: String,
}

impl ServerCertVerifier for Servers {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|e| worded(e, end_entity, &self.fingerprint))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_s_pool_name_is_found_among_its_bytes() {
        let cert = [b"\x30\x82junk".as_slice(), pool_name("0123456789abcdef").as_bytes(), b"\x00more"].concat();
        assert_eq!(named_fingerprint(&cert).as_deref(), Some("0123456789abcdef"));
        assert_eq!(named_fingerprint(b"pool-0123.satin"), None, "too short");
        assert_eq!(named_fingerprint(b"pool-0123456789abcdeg.satin"), None, "not hex");
    }
}
