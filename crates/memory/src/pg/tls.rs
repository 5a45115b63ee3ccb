//! TLS to a remote memory database: libpq's `sslmode` and `sslrootcert`, which the
//! client's own parser does not know past `require`, read out of the connection string
//! (`url.rs`), and the rustls connector each mode needs. `disable` sends no TLS;
//! `prefer` (the default, as libpq's) and `require` encrypt without checking who
//! answers unless a CA is given, when they check the chain as `verify-ca` does;
//! `verify-ca` checks the chain against the CA; `verify-full` also checks that the
//! certificate names the host. A Unix socket never uses TLS (the server offers none on
//! it), whatever the mode, as with libpq. A certificate that does not verify, a server
//! without TLS under `require`, and a server that takes only TLS refusing `disable` are
//! each [`MemoryError::PgTls`], naming the host and what to change.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use postgres::config::{Host, SslMode as ClientMode};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::MemoryError;

/// libpq's `sslmode`: how much TLS a connection insists on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it (libpq's default).
    #[default]
    Prefer,
    /// TLS or no connection.
    Require,
    /// TLS with a certificate chain the CA signed.
    VerifyCa,
    /// TLS with a certificate the CA signed for the host connected to.
    VerifyFull,
}

impl SslMode {
    /// The mode libpq calls `value`; `None` for another word.
    pub fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's name for it, as messages quote it.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What the client negotiates: the verifying modes insist on TLS like `require`,
    /// the connector then checks the certificate.
    fn client(self) -> ClientMode {
        match self {
            SslMode::Disable => ClientMode::Disable,
            SslMode::Prefer => ClientMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => ClientMode::Require,
        }
    }
}

/// What a connection string and the configuration say about TLS.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct TlsSettings {
    /// `sslmode`, [`SslMode::Prefer`] when unset.
    pub(super) mode: SslMode,
    /// The CA certificates (PEM) the server's chain must lead to: the URL's
    /// `sslrootcert`, else [`super::PgOptions::ca_file`].
    pub(super) ca_file: Option<PathBuf>,
}

/// How a pool's connections are opened: the connector, and the mode it serves (for
/// [`explain`]).
#[derive(Clone)]
pub(super) struct Tls {
    pub(super) connector: Connector,
    pub(super) mode: SslMode,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("mode", &self.mode).finish()
    }
}

/// Without TLS, or through rustls.
#[derive(Clone)]
pub(super) enum Connector {
    /// `sslmode=disable`, or only Unix sockets.
    Plain,
    /// Every other mode.
    Rustls(MakeRustlsConnect),
}

/// Sets `config`'s TLS negotiation from `settings` and builds the connector that checks
/// what `settings.mode` asks; `target` (password hidden) names the database in errors.
pub(super) fn connector(
    config: &mut postgres::Config,
    settings: &TlsSettings,
    target: &str,
) -> Result<Tls, MemoryError> {
    let only_sockets = config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)));
    let mode = if only_sockets {
        SslMode::Disable
    } else {
        settings.mode
    };
    config.ssl_mode(mode.client());
    if mode == SslMode::Disable {
        return Ok(Tls {
            connector: Connector::Plain,
            mode,
        });
    }
    let fail = |reason: String| MemoryError::PgTls {
        target: target.to_string(),
        reason,
    };
    // ring rather than aws-lc-rs keeps the build free of aws-lc's C build; rustls
    // deprecates it for lacking post-quantum key exchange, which PostgreSQL servers on
    // OpenSSL before 3.5 do not offer either.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = match &settings.ca_file {
        Some(path) => Some(Arc::new(roots(path).map_err(fail)?)),
        None if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) => {
            return Err(fail(format!(
                "sslmode={} needs the CA that signed the server's certificate: set memory.caFile (or LOCI_MEMORY_CA_FILE, or the URL's sslrootcert) to its PEM file",
                mode.name()
            )));
        }
        None => None,
    };
    let chain = match roots {
        Some(roots) => Some(
            WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| fail(format!("the CA certificates: {e}")))?,
        ),
        None => None,
    };
    let verifier = Arc::new(Verifier {
        chain,
        name: mode == SslMode::VerifyFull,
        provider: provider.clone(),
    });
    let tls = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Tls {
        connector: Connector::Rustls(MakeRustlsConnect::new(tls)),
        mode,
    })
}

/// The certificates of the PEM file at `path`; at least one.
fn roots(path: &Path) -> Result<RootCertStore, String> {
    let what = |e: &dyn std::fmt::Display| format!("the CA file {}: {e}", path.display());
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| what(&e))? {
        let cert = cert.map_err(|e| what(&e))?;
        store.add(cert).map_err(|e| what(&e))?;
    }
    if store.is_empty() {
        return Err(what(&"it holds no PEM certificate"));
    }
    Ok(store)
}

/// What a mode checks of the server's certificate: its chain against the CA when one
/// is given (`verify-ca`, and `prefer` or `require` with a CA), its name too for
/// `verify-full`, nothing without a CA (libpq's `prefer` and `require`: encrypted,
/// whoever answers). The handshake's signatures are always checked, so the server holds
/// the certificate's key.
#[derive(Debug)]
struct Verifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the chain before the name: a wrong name means a good chain.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The connection error `e` as a TLS one, when it is: a certificate that did not
/// verify (naming the host and the mode), a server without TLS under a mode that
/// requires it, or a server that takes only TLS refusing a connection without.
/// `None` for any other error.
pub(super) fn explain(
    e: &postgres::Error,
    config: &postgres::Config,
    mode: SslMode,
    target: &str,
) -> Option<MemoryError> {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let host = hosts.join(",");
    let reason = if let Some(db) = e.as_db_error() {
        // pg_hba.conf has only `hostssl` lines for this client.
        let refused = db.code() == &postgres::error::SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            // PostgreSQL 14 and later say "no encryption", earlier ones "SSL off".
            && (db.message().contains("no encryption") || db.message().contains("SSL off"));
        if !refused {
            return None;
        }
        format!(
            "the server at {host} accepts only TLS connections and refused this one without TLS (sslmode={}): use sslmode=require, or verify-full with memory.caFile",
            mode.name()
        )
    } else if let Some(tls) = rustls_error(e) {
        match tls {
            rustls::Error::InvalidCertificate(cert) => format!(
                "the TLS certificate of the server at {host} does not verify (sslmode={}): {}",
                mode.name(),
                certificate_problem(cert, &host)
            ),
            other => format!("the TLS handshake with {host} failed: {other}"),
        }
    } else {
        // The client's other TLS failures, whose words are in the cause only.
        let cause = std::error::Error::source(e)?.to_string();
        if cause.contains("server does not support TLS") {
            format!(
                "the server at {host} does not offer TLS, which sslmode={} requires: enable ssl on the server, or use sslmode=prefer (unencrypted)",
                mode.name()
            )
        } else if e.to_string().contains("TLS") {
            format!("TLS with the server at {host} failed: {cause}")
        } else {
            return None;
        }
    };
    Some(MemoryError::PgTls {
        target: target.to_string(),
        reason,
    })
}

/// The rustls error under `e`, if the failure was rustls's.
fn rustls_error(e: &postgres::Error) -> Option<&rustls::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(tls) = c.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && let Some(tls) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>())
        {
            return Some(tls);
        }
        cause = c.source();
    }
    None
}

/// What is wrong with a certificate, in words.
fn certificate_problem(e: &CertificateError, host: &str) -> String {
    match e {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            "it is not signed by the configured CA (memory.caFile or sslrootcert)".into()
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("it is not issued for the host name {host}: {e}")
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("it has expired: {e}")
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            format!("it is not valid yet: {e}")
        }
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_libpq_mode_reads_and_names_itself() {
        for name in ["disable", "prefer", "require", "verify-ca", "verify-full"] {
            assert_eq!(SslMode::parse(name).map(SslMode::name), Some(name));
        }
        for bad in ["", "allow", "REQUIRE", "verify_full", "require "] {
            assert_eq!(SslMode::parse(bad), None, "{bad:?}");
        }
    }
}
