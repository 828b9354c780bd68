//! TLS for the client API (rustls on ring): the certificate and key are read from files and read
//! again when they change, without a restart; optional client certificates for trusted bot farms,
//! whose CA file is read again likewise.
//!
//! Why a resolver of our own rather than tonic's `ServerTlsConfig`: tonic's fixes the
//! certificate when the server starts, and certificates from cert-manager or Let's Encrypt are
//! renewed every few weeks. A reload that fails (a half-written file, a key that does not match
//! the certificate) keeps the certificate in use, logs the failure and counts it in
//! `bete_tls_certificate_reloads{result="failed"}`: a bad file never takes the service down.
//!
//! Handshakes run in tasks of their own (one slow client never holds up the next), after a
//! connection took its place under the connection cap, and under the preface deadline: the
//! handshake and the HTTP/2 preface together must arrive within `--preface-timeout-secs`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::client::danger::HandshakeSignatureValid;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::UnixTime;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use tokio_rustls::server::TlsStream;
use tokio_stream::StreamExt as _;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::TcpIncoming;

use crate::conn::{Guarded, Places};
use bete_base::metrics::{Metrics, ReloadLabels};

/// How often the certificate and key files are checked for a change by default: a renewed
/// certificate is in use within a minute, at the cost of reading two small files.
pub const DEFAULT_RELOAD_EVERY: Duration = Duration::from_secs(60);

/// Whether a client certificate is asked for (only with a client CA, `--tls-client-ca`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ClientAuth {
    /// A client may present a certificate signed by the client CA (a trusted bot farm) or none.
    #[default]
    Optional,
    /// Every client must present a certificate signed by the client CA.
    Required,
}

/// The TLS settings of the client API.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    /// PEM certificate chain, the server's certificate first.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM certificates of the CA that signs client certificates; `None`: none are asked for.
    pub client_ca: Option<PathBuf>,
    pub client_auth: ClientAuth,
    /// How often the certificate and key files are checked for a change.
    pub reload_every: Duration,
    /// The name peers' certificates are checked against when this node forwards to them (they
    /// are dialled by address, which no certificate names). See [`PeerTls`].
    pub peer_name: Option<String>,
    /// PEM certificates of the CA that signs the nodes' certificates.
    pub peer_ca: Option<PathBuf>,
}

impl TlsSettings {
    pub fn new(cert: PathBuf, key: PathBuf) -> TlsSettings {
        TlsSettings {
            cert,
            key,
            client_ca: None,
            client_auth: ClientAuth::Optional,
            reload_every: DEFAULT_RELOAD_EVERY,
            peer_name: None,
            peer_ca: None,
        }
    }

    /// How this node dials its peers, when it forwards: over TLS, as it serves. Both the name
    /// and the CA are needed (the crate carries no public roots, and peers are dialled by
    /// address): without them a node refuses to start rather than forward in the clear or
    /// not at all.
    pub fn peer_tls(&self) -> Result<PeerTls, TlsError> {
        let (Some(name), Some(ca)) = (&self.peer_name, &self.peer_ca) else {
            return Err(TlsError::Config(
                "a node serving TLS with --cluster-secret dials its peers over TLS: set \
                 --peer-tls-name (a DNS name in every node's certificate) and --peer-ca \
                 (the CA that signs them)"
                    .into(),
            ));
        };
        let peer = PeerTls {
            name: name.clone(),
            ca: ca.clone(),
            // A node that requires client certificates gets one from its peers too; with
            // `optional`, none is presented (a certificate the client CA does not sign would
            // fail the handshake).
            identity: (self.client_ca.is_some() && self.client_auth == ClientAuth::Required)
                .then(|| (self.cert.clone(), self.key.clone())),
        };
        // Every file is read and checked now, so a mistake stops the start.
        peer.client_config()?;
        Ok(peer)
    }
}

/// How a node dials its peers over TLS (tonic's client on rustls, on ring as the listener).
#[derive(Clone, Debug)]
pub struct PeerTls {
    /// The DNS name every node's certificate carries (`--peer-tls-name`).
    pub name: String,
    /// PEM CA certificates trusted for peers (`--peer-ca`).
    pub ca: PathBuf,
    /// The node's own certificate and key, presented to peers that require one.
    pub identity: Option<(PathBuf, PathBuf)>,
}

impl PeerTls {
    /// The client configuration, its files read now: a channel made after a certificate was
    /// renewed presents the new one.
    pub fn client_config(&self) -> Result<tonic::transport::ClientTlsConfig, TlsError> {
        use tonic::transport::{Certificate, ClientTlsConfig, Identity};
        rustls::pki_types::ServerName::try_from(self.name.as_str())
            .map_err(|e| TlsError::Config(format!("--peer-tls-name {:?}: {e}", self.name)))?;
        let ca = read(&self.ca)?;
        let roots = CertificateDer::pem_slice_iter(&ca)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&self.ca, e))?;
        if roots.is_empty() {
            return Err(bad(&self.ca, "no CERTIFICATE block"));
        }
        let mut config = ClientTlsConfig::new()
            .domain_name(self.name.clone())
            .ca_certificate(Certificate::from_pem(ca));
        if let Some((cert_path, key_path)) = &self.identity {
            let (cert, key) = (read(cert_path)?, read(key_path)?);
            certified_key((cert_path, &cert), (key_path, &key), &provider())?;
            config = config.identity(Identity::from_pem(cert, key));
        }
        Ok(config)
    }
}

/// Why a certificate, key or client CA could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("{path}: {detail}")]
    Bad { path: String, detail: String },
    #[error("{0}")]
    Config(String),
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

fn bad(path: &Path, detail: impl std::fmt::Display) -> TlsError {
    TlsError::Bad {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The provider of every TLS session: ring (builds with a C compiler alone).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A certificate and its key from PEM bytes, checked to belong together.
fn certified_key(
    (cert_path, cert): (&Path, &[u8]),
    (key_path, key): (&Path, &[u8]),
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(cert_path, e))?;
    if chain.is_empty() {
        return Err(bad(cert_path, "no CERTIFICATE block"));
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| bad(key_path, e))?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| {
        bad(
            key_path,
            format!("{e} (does the key belong to {})?", cert_path.display()),
        )
    })
}

/// The client CA in use (`--tls-client-ca`), read again when its file changes, like the
/// certificate: a bot farm's CA is rotated without a restart, and a bad file keeps the CA in
/// use. Connections already made keep the verdict they got.
#[derive(Debug)]
pub struct ClientCa {
    path: PathBuf,
    auth: ClientAuth,
    current: RwLock<Arc<dyn ClientCertVerifier>>,
    /// The bytes read last (loaded or refused), as [`CertStore`] keeps them.
    seen: Mutex<Vec<u8>>,
    provider: Arc<CryptoProvider>,
}

impl ClientCa {
    fn open(
        path: &Path,
        auth: ClientAuth,
        provider: Arc<CryptoProvider>,
    ) -> Result<ClientCa, TlsError> {
        let pem = read(path)?;
        let verifier = Self::verifier(path, &pem, auth, &provider)?;
        Ok(ClientCa {
            path: path.to_path_buf(),
            auth,
            current: RwLock::new(verifier),
            seen: Mutex::new(pem),
            provider,
        })
    }

    fn verifier(
        path: &Path,
        pem: &[u8],
        auth: ClientAuth,
        provider: &Arc<CryptoProvider>,
    ) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            roots
                .add(cert.map_err(|e| bad(path, e))?)
                .map_err(|e| bad(path, e))?;
        }
        if roots.is_empty() {
            return Err(bad(path, "no CERTIFICATE block"));
        }
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
        let verifier = match auth {
            ClientAuth::Required => verifier,
            ClientAuth::Optional => verifier.allow_unauthenticated(),
        };
        verifier.build().map_err(|e| bad(path, e))
    }

    /// Reads the file again: as [`CertStore::reload`].
    pub fn reload(&self) -> Result<bool, TlsError> {
        let pem = read(&self.path)?;
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| bad(&self.path, "reload state poisoned"))?;
        if *seen == pem {
            return Ok(false);
        }
        let verifier = Self::verifier(&self.path, &pem, self.auth, &self.provider);
        *seen = pem;
        let verifier = verifier?;
        if let Ok(mut current) = self.current.write() {
            *current = verifier;
        }
        Ok(true)
    }

    fn in_use(&self) -> Result<Arc<dyn ClientCertVerifier>, rustls::Error> {
        self.current
            .read()
            .map(|c| c.clone())
            .map_err(|_| rustls::Error::General("client CA state poisoned".into()))
    }
}

impl ClientCertVerifier for ClientCa {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        self.auth == ClientAuth::Required
    }

    /// None: hints would borrow from the verifier in use, which a reload replaces; a client
    /// holding one identity (every gRPC client) sends it without them.
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.in_use()?
            .verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.in_use()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.in_use()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The certificate in use, replaced when its files change (see [`CertStore::reload`]).
#[derive(Debug)]
pub struct CertStore {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    /// The bytes read last (loaded or refused): unchanged files are not parsed again, and a
    /// refused pair is reported once, not at every check.
    seen: Mutex<(Vec<u8>, Vec<u8>)>,
    provider: Arc<CryptoProvider>,
    /// The client CA, when client certificates are asked for; read again with the certificate.
    client_ca: Option<Arc<ClientCa>>,
}

impl CertStore {
    /// Reads the certificate and key, and the client CA if there is one; a server that cannot
    /// read them does not start.
    pub fn open(settings: &TlsSettings) -> Result<CertStore, TlsError> {
        let (cert_path, key_path) = (settings.cert.as_path(), settings.key.as_path());
        let provider = provider();
        let (cert, key) = (read(cert_path)?, read(key_path)?);
        let loaded = certified_key((cert_path, &cert), (key_path, &key), &provider)?;
        let client_ca = match &settings.client_ca {
            Some(path) => Some(Arc::new(ClientCa::open(
                path,
                settings.client_auth,
                provider.clone(),
            )?)),
            None => None,
        };
        Ok(CertStore {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            current: RwLock::new(Arc::new(loaded)),
            seen: Mutex::new((cert, key)),
            provider,
            client_ca,
        })
    }

    /// The client CA's verifier, if client certificates are asked for.
    pub fn client_ca(&self) -> Option<Arc<ClientCa>> {
        self.client_ca.clone()
    }

    /// Reads the files again. `Ok(true)`: a new certificate is in use for new connections;
    /// `Ok(false)`: nothing changed (or the change was already refused); `Err`: the new files
    /// were refused and the certificate in use stays.
    pub fn reload(&self) -> Result<bool, TlsError> {
        let (cert, key) = (read(&self.cert_path)?, read(&self.key_path)?);
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| bad(&self.cert_path, "reload state poisoned"))?;
        if seen.0 == cert && seen.1 == key {
            return Ok(false);
        }
        let loaded = certified_key(
            (&self.cert_path, &cert),
            (&self.key_path, &key),
            &self.provider,
        );
        *seen = (cert, key);
        let loaded = loaded?;
        if let Ok(mut current) = self.current.write() {
            *current = Arc::new(loaded);
        }
        Ok(true)
    }

    /// The certificate chain in use (DER), the server's own first.
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        self.current
            .read()
            .map(|c| c.cert.clone())
            .unwrap_or_default()
    }

    /// Checks the files every `every` until `stop`; outcomes are logged and counted.
    pub async fn watch(
        self: Arc<Self>,
        every: Duration,
        metrics: Arc<Metrics>,
        stop: CancellationToken,
    ) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await; // the first tick is at once: the files were just read
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let ca = self
                .client_ca
                .as_ref()
                .map(|ca| (ca.path.clone(), ca.reload()));
            let outcomes = [(self.cert_path.clone(), "certificate", self.reload())]
                .into_iter()
                .chain(ca.map(|(path, r)| (path, "client CA", r)));
            for (path, what, outcome) in outcomes {
                let result = match outcome {
                    Ok(false) => continue,
                    Ok(true) => {
                        tracing::info!(path = %path.display(), "TLS {what} reloaded");
                        "ok"
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "TLS {what} not reloaded; the one in use stays");
                        "failed"
                    }
                };
                metrics
                    .tls_reloads
                    .get_or_create(&ReloadLabels { result })
                    .inc();
            }
        }
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().ok().map(|c| c.clone())
    }
}

/// The rustls configuration of a listener: the certificate from `certs`, client certificates
/// as `settings` asks, and the ALPN protocols offered (`h2` for gRPC; the web listener adds
/// `http/1.1`). gRPC clients (grpcio, grpc-go) refuse a server that does not select `h2`.
pub fn server_config(
    certs: Arc<CertStore>,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let builder = match certs.client_ca() {
        None => builder.with_no_client_auth(),
        Some(ca) => builder.with_client_cert_verifier(ca),
    };
    let client_ca = certs.client_ca().is_some();
    let mut config = builder.with_cert_resolver(certs);
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    if client_ca {
        // A resumed session keeps the client certificate it was made with, unchecked: a farm
        // whose CA a reload removed could go on resuming (and keep its exemptions). With a
        // client CA every handshake is full, so each new connection faces the CA in use.
        config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
    }
    Ok(Arc::new(config))
}

/// A connection over TLS, under the connection cap and the preface deadline.
pub type TlsConn = Guarded<TlsStream<TcpStream>>;

/// Accepts connections on `listener` and hands out those whose handshake succeeded, wrapped by
/// `wrap`, until the receiver is dropped or `stop` fires. At the connection cap a new connection
/// is closed at once; a handshake that fails or is not over by the preface deadline closes its
/// connection (and is counted in `bete_tls_handshake_failures`).
pub fn incoming<IO: Send + 'static>(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    places: Places,
    preface_timeout: Duration,
    metrics: Arc<Metrics>,
    wrap: impl Fn(TlsConn) -> IO + Send + Sync + 'static,
    stop: CancellationToken,
) -> tokio_stream::wrappers::ReceiverStream<io::Result<IO>> {
    // A handful: the server takes connections as fast as they come; this only decouples.
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let wrap = Arc::new(wrap);
    tokio::spawn(async move {
        let mut tcp = TcpIncoming::from(listener).with_nodelay(Some(true));
        loop {
            let next = tokio::select! {
                () = stop.cancelled() => return,
                () = tx.closed() => return,
                next = tcp.next() => next,
            };
            let io = match next {
                Some(Ok(io)) => io,
                Some(Err(e)) => {
                    // Out of descriptors, most likely: give the others a moment to close.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                None => return,
            };
            // The handshake holds a place under the cap and the address's ordinary share from
            // here: slow handshakes from one address cannot take more than its share.
            let Ok(mut place) = places.take(io.peer_addr().ok()) else {
                continue;
            };
            let deadline = tokio::time::Instant::now() + preface_timeout;
            let (acceptor, tx, wrap, metrics) =
                (acceptor.clone(), tx.clone(), wrap.clone(), metrics.clone());
            tokio::spawn(async move {
                let handshake = async {
                    let mut io = io;
                    if plaintext_refused(&mut io).await {
                        return Err(io::Error::other("plaintext HTTP/2 on the TLS port"));
                    }
                    acceptor.accept(io).await
                };
                match tokio::time::timeout_at(deadline, handshake).await {
                    Ok(Ok(tls)) => {
                        // rustls verified any certificate it accepted.
                        if tls.get_ref().1.peer_certificates().is_some() {
                            place.verified();
                        }
                        let conn = Guarded::until(tls, place, deadline);
                        let _ = tx.send(Ok(wrap(conn))).await;
                    }
                    Ok(Err(e)) => {
                        // A plaintext client, an unknown CA, a missing client certificate.
                        tracing::debug!(error = %e, "TLS handshake failed");
                        metrics.tls_handshake_failures.inc();
                    }
                    Err(_) => {
                        tracing::debug!("TLS handshake not over by the preface deadline");
                        metrics.tls_handshake_failures.inc();
                    }
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// What a plaintext HTTP/2 client is told on the TLS port, as the debug data of a GOAWAY.
const PLAINTEXT_REFUSAL: &[u8] = b"this port speaks TLS: connect with https://";

/// A client that sent the plaintext HTTP/2 preface where a TLS ClientHello belongs gets an
/// HTTP/2 answer it understands: SETTINGS, then GOAWAY with INADEQUATE_SECURITY (gRPC clients
/// report PERMISSION_DENIED) and [`PLAINTEXT_REFUSAL`], instead of TLS alert bytes that its
/// HTTP/2 parser takes for a broken frame (INTERNAL, "frame size error"). True if refused.
async fn plaintext_refused(io: &mut TcpStream) -> bool {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut first = [0u8; 3];
    let Ok(n) = io.peek(&mut first).await else {
        return false;
    };
    if n == 0 || first[..n] != b"PRI"[..n] {
        return false;
    }
    // An empty SETTINGS frame (the server's preface), then GOAWAY: last stream 0, error 0xc.
    let mut frames = vec![0, 0, 0, 4, 0, 0, 0, 0, 0];
    let len = 8 + PLAINTEXT_REFUSAL.len();
    frames.extend_from_slice(&[
        (len >> 16) as u8,
        (len >> 8) as u8,
        len as u8,
        7,
        0,
        0,
        0,
        0,
        0,
    ]);
    frames.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0x0c]);
    frames.extend_from_slice(PLAINTEXT_REFUSAL);
    let _ = io.write_all(&frames).await;
    // Closing with the client's bytes unread would send a reset, which can overtake the GOAWAY:
    // end our side, then read what the client sends until it closes (bounded by the deadline).
    let _ = io.shutdown().await;
    let mut sink = [0u8; 1024];
    while let Ok(n) = io.read(&mut sink).await {
        if n == 0 {
            break;
        }
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pair(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec![name.to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// A new pair is taken; a key of another certificate, a truncated file or a missing one is
    /// refused and the certificate in use stays; an unchanged pair is not reported again.
    #[test]
    fn a_bad_reload_keeps_the_certificate_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (c1, k1) = pair("one.test");
        std::fs::write(&cert, &c1).unwrap();
        std::fs::write(&key, &k1).unwrap();
        let store = CertStore::open(&TlsSettings::new(cert.clone(), key.clone())).unwrap();
        let first = store.chain();
        assert!(!store.reload().unwrap(), "nothing changed");

        let (c2, k2) = pair("two.test");
        std::fs::write(&cert, &c2).unwrap();
        assert!(
            store.reload().is_err(),
            "the old key does not match the new certificate"
        );
        assert_eq!(store.chain(), first);
        assert!(!store.reload().unwrap(), "a refused pair is reported once");
        std::fs::write(&key, &k2).unwrap();
        assert!(store.reload().unwrap());
        let second = store.chain();
        assert_ne!(second, first);

        std::fs::write(&cert, &c2[..c2.len() / 2]).unwrap();
        assert!(store.reload().is_err());
        std::fs::remove_file(&key).unwrap();
        assert!(matches!(store.reload(), Err(TlsError::Read { .. })));
        assert_eq!(store.chain(), second);
    }

    /// A server that cannot read its certificate does not start.
    #[test]
    fn an_unreadable_certificate_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        assert!(CertStore::open(&TlsSettings::new(cert.clone(), key.clone())).is_err());
        std::fs::write(&cert, "not a certificate").unwrap();
        std::fs::write(&key, pair("x.test").1).unwrap();
        let e = CertStore::open(&TlsSettings::new(cert.clone(), key.clone()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no CERTIFICATE block"), "{e}");
    }
}
