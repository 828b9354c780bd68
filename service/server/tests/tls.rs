//! TLS on the client API, against the real server over loopback: certificates made here with
//! rcgen, a client that plays a match over TLS, a plaintext client refused, the certificate
//! replaced under a running server, client certificates (and their CA replaced likewise), and
//! the connection cap and preface
//! deadline kept over TLS.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::bot_service_client::BotServiceClient;
use bete_server::tls::{ClientAuth, TlsSettings};
use common::tls::{Ca, Leaf};
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

/// Writes `leaf` where the server reads its certificate: each file replaced in one rename, as
/// an operator (or Kubernetes' secret volume) does.
fn install(dir: &Path, leaf: &Leaf) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    for (path, text) in [(&key, &leaf.key), (&cert, &leaf.cert)] {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }
    (cert, key)
}

async fn tls_server(
    data: &Path,
    certs: &Path,
    leaf: &Leaf,
    tweak: impl FnOnce(&mut bete_server::ServerConfig),
) -> TestServer {
    let (cert, key) = install(certs, leaf);
    TestServer::start(data.to_path_buf(), |c| {
        c.tls = Some(TlsSettings {
            reload_every: Duration::from_millis(100),
            ..TlsSettings::new(cert, key)
        });
        tweak(c);
    })
    .await
}

fn tls_config(ca: &Ca) -> ClientTlsConfig {
    ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&ca.pem))
        .domain_name("localhost")
}

async fn tls_channel(addr: SocketAddr, config: ClientTlsConfig) -> Result<Channel, String> {
    Channel::from_shared(format!("https://localhost:{}", addr.port()))
        .unwrap()
        .tls_config(config)
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))
}

async fn try_register(ch: &Channel, name: &str) -> Result<pb::RegisterBotResponse, tonic::Status> {
    BotServiceClient::new(ch.clone())
        .register_bot(pb::RegisterBotRequest {
            name: name.into(),
            owner: "tls-tests".into(),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

/// The end-entity certificate a new TLS connection is shown (rustls directly: tonic does not
/// expose the server's certificate).
async fn served_certificate(addr: SocketAddr, ca: &Ca) -> CertificateDer<'static> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(&ca.pem)).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(bete_server::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].clone()
}

fn der_of(pem: &str) -> CertificateDer<'static> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

/// One match at a 3-seat table with two house bots, played by a bot over `ch` to its end.
async fn play_a_match(ch: &Channel) {
    let mut me = register(ch, "over-tls").await;
    let id = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: (1..3)
                .map(|s| house(s, pb::HouseBotPolicy::Heuristic))
                .collect(),
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    let mut stream = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    me.sit(&id, 0).await;
    let mut decisions = 0;
    loop {
        let m = timeout(60, stream.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        use pb::watch_bot_response::Kind;
        match m.kind.unwrap() {
            Kind::Event(e) if matches!(e.body, Some(pb::event::Body::MatchEnded(_))) => break,
            Kind::Decision(d) => {
                decisions += 1;
                let view = d.view.unwrap();
                me.client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: id.clone(),
                        action: Some(view.legal_actions[0].clone()),
                        expected_seq: d.seq,
                        request_id: format!("r{decisions}"),
                    })
                    .await
                    .unwrap();
            }
            _ => {}
        }
    }
    assert!(decisions > 0);
    let record = me
        .client
        .get_game_record(pb::GetGameRecordRequest { table_id: id })
        .await
        .unwrap()
        .into_inner();
    assert!(!record.record_json.is_empty());
}

/// A bot connects over TLS (verifying the server against the test CA) and plays a match; a
/// plaintext client to the TLS port fails with UNAVAILABLE, and the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_plays_over_tls_and_plaintext_is_refused() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete one"), |_| {}).await;
    let ch = tls_channel(srv.addr, tls_config(&ca)).await.unwrap();
    play_a_match(&ch).await;

    // Plaintext HTTP/2 to the TLS port: the server answers in HTTP/2, SETTINGS then a GOAWAY
    // with INADEQUATE_SECURITY saying to use https:// (gRPC clients report PERMISSION_DENIED),
    // rather than TLS bytes an HTTP/2 parser takes for a broken frame.
    let mut raw = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    raw.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    raw.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
    let mut answer = Vec::new();
    timeout(10, raw.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&answer[..9], &[0, 0, 0, 4, 0, 0, 0, 0, 0], "SETTINGS first");
    let goaway = &answer[9..];
    assert_eq!(goaway[3], 7, "then GOAWAY: {answer:?}");
    assert_eq!(&goaway[13..17], &[0, 0, 0, 0x0c], "INADEQUATE_SECURITY");
    let said = String::from_utf8_lossy(&goaway[17..]);
    assert!(said.contains("https://"), "{said}");
    // A gRPC client fails at once: PERMISSION_DENIED when it read the GOAWAY before sending its
    // call, else the closed connection (which call wins is timing); never a server status.
    let plain = Channel::from_shared(format!("http://{}", srv.addr))
        .unwrap()
        .connect_lazy();
    let e = timeout(10, try_register(&plain, "in-clear"))
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            e.code(),
            tonic::Code::PermissionDenied | tonic::Code::Cancelled | tonic::Code::Unavailable
        ),
        "{e:?}"
    );
    assert_eq!(reason(&e), "", "{e:?}");
    // A client that does not trust the server's CA gets no connection either.
    let other = Ca::new("another CA");
    assert!(tls_channel(srv.addr, tls_config(&other)).await.is_err());
    // The TLS client is unaffected.
    try_register(&ch, "still-here").await.unwrap();
    srv.stop().await;
}

/// The certificate is replaced under the running server: new connections are shown the new one
/// (its serial and subject), the open one goes on; a bad file is refused, counted, and the
/// certificate in use stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_certificate_is_reloaded_without_a_restart() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let (one, two) = (ca.server(1, "bete one"), ca.server(2, "bete two"));
    let metrics = free_addr();
    let srv = tls_server(data.path(), certs.path(), &one, |c| {
        c.metrics_addr = Some(metrics)
    })
    .await;
    let ch = tls_channel(srv.addr, tls_config(&ca)).await.unwrap();
    try_register(&ch, "before").await.unwrap();
    // Kubernetes probes this (its gRPC probes cannot speak TLS).
    let health = http_get(metrics, "/healthz").await;
    assert!(
        health.starts_with("HTTP/1.1 200") && health.ends_with("SERVING\n"),
        "{health}"
    );
    assert_eq!(served_certificate(srv.addr, &ca).await, one.der);

    install(certs.path(), &two);
    let mut served = one.der.clone();
    for _ in 0..100 {
        served = served_certificate(srv.addr, &ca).await;
        if served == two.der {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served, two.der, "the new certificate was never served");
    assert_eq!(subject_and_serial(&served), ("bete two".to_string(), 2));
    // The connection opened before goes on; a new one works too.
    try_register(&ch, "after").await.unwrap();
    let ch2 = tls_channel(srv.addr, tls_config(&ca)).await.unwrap();
    try_register(&ch2, "new-connection").await.unwrap();

    // A broken certificate file: refused (counted), the certificate in use stays.
    std::fs::write(
        certs.path().join("tls.crt"),
        "-----BEGIN CERTIFICATE-----\nbroken",
    )
    .unwrap();
    assert_eq!(
        failed_reloads(metrics).await,
        1,
        "the failed reload was not counted once"
    );
    assert_eq!(served_certificate(srv.addr, &ca).await, two.der);
    srv.stop().await;
}

/// The failed reloads counted, once any is (polled for up to 5 s).
async fn failed_reloads(metrics: SocketAddr) -> u64 {
    let failed = r#"bete_tls_certificate_reloads_total{result="failed"}"#;
    let mut seen = 0;
    for _ in 0..100 {
        let body = http_get(metrics, "/metrics").await;
        seen = body
            .lines()
            .find_map(|l| l.strip_prefix(failed))
            .map_or(0, |v| v.trim().parse().unwrap());
        if seen > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen
}

/// The subject's common name and the serial of a certificate rcgen made (no X.509 parser is
/// at hand): the serial is the INTEGER after the version `[0] { 2 }`, the common name the string
/// after the last CN OID 2.5.4.3 (the issuer's comes first).
fn subject_and_serial(der: &CertificateDer<'_>) -> (String, u64) {
    let bytes = der.as_ref();
    let cn_oid = [0x06, 0x03, 0x55, 0x04, 0x03];
    let at = bytes
        .windows(cn_oid.len())
        .rposition(|w| w == cn_oid)
        .unwrap();
    let s = &bytes[at + cn_oid.len()..];
    let (len, text) = (usize::from(s[1]), &s[2..]);
    let cn = String::from_utf8(text[..len].to_vec()).unwrap();
    let v = [0xa0, 0x03, 0x02, 0x01, 0x02];
    let at = bytes.windows(v.len()).position(|w| w == v).unwrap() + v.len();
    assert_eq!(bytes[at], 0x02);
    let len = usize::from(bytes[at + 1]);
    let serial = bytes[at + 2..at + 2 + len]
        .iter()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    (cn, serial)
}

/// `--tls-client-auth required`: a client without a certificate is refused at the handshake;
/// one with a certificate of the client CA is let in. `optional`: both are let in, and the one
/// with a certificate is not held to the per-address registration limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_required_and_optional() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let farms = Ca::new("bot farms CA");
    let farm = farms.client("farm one");
    let stranger = Ca::new("not trusted").client("stranger");
    std::fs::write(certs.path().join("farms.pem"), &farms.pem).unwrap();
    let client_ca = certs.path().join("farms.pem");
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        let tls = c.tls.as_mut().unwrap();
        tls.client_ca = Some(client_ca.clone());
        tls.client_auth = ClientAuth::Required;
    })
    .await;
    let anonymous = tls_channel(srv.addr, tls_config(&ca)).await;
    let refused = match anonymous {
        Err(_) => true,
        // With TLS 1.3 the client may finish before the server refuses: the first call fails.
        Ok(ch) => try_register(&ch, "anonymous").await.is_err(),
    };
    assert!(refused, "a client without a certificate was served");
    let untrusted = tls_config(&ca).identity(Identity::from_pem(&stranger.cert, &stranger.key));
    let refused = match tls_channel(srv.addr, untrusted).await {
        Err(_) => true,
        Ok(ch) => try_register(&ch, "stranger").await.is_err(),
    };
    assert!(refused, "a certificate of another CA was accepted");
    let with_cert = tls_config(&ca).identity(Identity::from_pem(&farm.cert, &farm.key));
    let ch = tls_channel(srv.addr, with_cert.clone()).await.unwrap();
    play_a_match(&ch).await;
    srv.stop().await;

    let data = tempfile::tempdir().unwrap();
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        let tls = c.tls.as_mut().unwrap();
        tls.client_ca = Some(client_ca.clone());
        tls.client_auth = ClientAuth::Optional;
        c.limits.registrations_per_address = "1/2".parse().unwrap();
    })
    .await;
    let anonymous = tls_channel(srv.addr, tls_config(&ca)).await.unwrap();
    try_register(&anonymous, "a1").await.unwrap();
    try_register(&anonymous, "a2").await.unwrap();
    let e = try_register(&anonymous, "a3").await.unwrap_err();
    assert_eq!(reason(&e), "RATE_LIMITED");
    let farm_ch = tls_channel(srv.addr, with_cert).await.unwrap();
    for i in 0..5 {
        try_register(&farm_ch, &format!("farm-{i}")).await.unwrap();
    }
    srv.stop().await;
}

/// Whether a client with `identity` is served (a call goes through).
async fn served_with(addr: SocketAddr, ca: &Ca, identity: &Leaf, name: &str) -> bool {
    let config = tls_config(ca).identity(Identity::from_pem(&identity.cert, &identity.key));
    match tls_channel(addr, config).await {
        Err(_) => false,
        // With TLS 1.3 the client may finish before the server refuses: the first call fails.
        Ok(ch) => try_register(&ch, name).await.is_ok(),
    }
}

/// The client CA is read again when its file changes, like the certificate: a bot farm's CA
/// rotated without a restart. The new CA's clients are served and the old one's refused; a
/// broken CA file is refused (counted) and the CA in use stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_ca_is_reloaded_without_a_restart() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let (old_farms, new_farms) = (Ca::new("old farms CA"), Ca::new("new farms CA"));
    let (old_farm, new_farm) = (old_farms.client("old farm"), new_farms.client("new farm"));
    let client_ca = certs.path().join("farms.pem");
    let put = |pem: &str| {
        let tmp = client_ca.with_extension("tmp");
        std::fs::write(&tmp, pem).unwrap();
        std::fs::rename(&tmp, &client_ca).unwrap();
    };
    put(&old_farms.pem);
    let metrics = free_addr();
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        let tls = c.tls.as_mut().unwrap();
        tls.client_ca = Some(client_ca.clone());
        tls.client_auth = ClientAuth::Required;
        c.metrics_addr = Some(metrics);
    })
    .await;
    assert!(served_with(srv.addr, &ca, &old_farm, "old-1").await);
    assert!(!served_with(srv.addr, &ca, &new_farm, "new-1").await);

    put(&new_farms.pem);
    let mut rotated = false;
    for i in 0..100 {
        if served_with(srv.addr, &ca, &new_farm, &format!("new-{}", i + 2)).await {
            rotated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(rotated, "the new client CA was never used");
    assert!(
        !served_with(srv.addr, &ca, &old_farm, "old-2").await,
        "the old CA still trusted"
    );

    put("-----BEGIN CERTIFICATE-----\nbroken");
    assert_eq!(
        failed_reloads(metrics).await,
        1,
        "the failed reload was not counted once"
    );
    assert!(served_with(srv.addr, &ca, &new_farm, "new-after").await);
    srv.stop().await;
}

/// Whether the server takes an HTTP/2 connection over TLS made with `config` (which a test
/// shares between connections, so the second may resume the first's session): the preface is
/// answered with the server's SETTINGS, which also brings the client any session tickets.
async fn h2_answered(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> bool {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let Ok(mut tls) = tokio_rustls::TlsConnector::from(config)
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
    else {
        return false;
    };
    // A preface and an empty SETTINGS frame.
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    if tls.write_all(&hello).await.is_err() {
        return false;
    }
    let mut buf = [0u8; 9];
    let read = tokio::time::timeout(Duration::from_secs(5), tls.read_exact(&mut buf)).await;
    matches!(read, Ok(Ok(_))) && buf[3] == 4
}

/// With a client CA, sessions are not resumed: a resumed session would keep the client
/// certificate it was made with, unchecked, so a farm whose CA a reload removed could go on
/// resuming its way past the CA in use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_client_ca_cannot_be_resumed_past() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let (old_farms, new_farms) = (Ca::new("old farms CA"), Ca::new("new farms CA"));
    let (old_farm, new_farm) = (old_farms.client("old farm"), new_farms.client("new farm"));
    let client_ca = certs.path().join("farms.pem");
    std::fs::write(&client_ca, &old_farms.pem).unwrap();
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        let tls = c.tls.as_mut().unwrap();
        tls.client_ca = Some(client_ca.clone());
        tls.client_auth = ClientAuth::Required;
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(&ca.pem)).unwrap();
    let key = {
        use rustls::pki_types::pem::PemObject;
        rustls::pki_types::PrivateKeyDer::from_pem_slice(old_farm.key.as_bytes()).unwrap()
    };
    // One config for both connections: its session cache would resume the first.
    let config = Arc::new(
        rustls::ClientConfig::builder_with_provider(bete_server::tls::provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(vec![old_farm.der.clone()], key)
            .unwrap(),
    );
    assert!(
        h2_answered(srv.addr, config.clone()).await,
        "the old farm at first"
    );
    let tmp = client_ca.with_extension("tmp");
    std::fs::write(&tmp, &new_farms.pem).unwrap();
    std::fs::rename(&tmp, &client_ca).unwrap();
    let mut rotated = false;
    for i in 0..100 {
        if served_with(srv.addr, &ca, &new_farm, &format!("new-{i}")).await {
            rotated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(rotated, "the new client CA was never used");
    assert!(
        !h2_answered(srv.addr, config).await,
        "the old farm resumed its way past the new CA"
    );
    srv.stop().await;
}

/// Reads until the peer closes (or fails).
async fn closed(s: &mut (impl tokio::io::AsyncRead + Unpin)) {
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Over TLS the connection cap and the preface deadline still hold: a connection over the cap
/// is closed at once; one that never starts the handshake, and one that finishes the handshake
/// but never sends the HTTP/2 preface, are closed by the deadline; then a real client gets in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_and_preface_deadline_hold_over_tls() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let metrics = free_addr();
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        c.preface_timeout = Duration::from_secs(2);
        c.max_connections = 2;
        c.metrics_addr = Some(metrics);
    })
    .await;
    let mut silent = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(&ca.pem)).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(bete_server::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    let mut handshaken = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    assert!(
        timeout(2, closed(&mut over)).await.is_ok(),
        "the connection over the cap was not closed"
    );
    assert!(
        timeout(10, closed(&mut silent)).await.is_ok(),
        "a connection without a handshake was not closed"
    );
    assert!(
        timeout(10, closed(&mut handshaken)).await.is_ok(),
        "a connection without a preface was not closed"
    );
    assert!(gauge(metrics, "bete_tls_handshake_failures_total").await >= 1);
    let ch = tls_channel(srv.addr, tls_config(&ca)).await.unwrap();
    try_register(&ch, "after-the-idlers").await.unwrap();
    srv.stop().await;
}

/// A TCP connection to `to` from `from` (another loopback address).
async fn dial_from(from: &str, to: SocketAddr) -> tokio::net::TcpStream {
    let s = tokio::net::TcpSocket::new_v4().unwrap();
    s.bind(format!("{from}:0").parse().unwrap()).unwrap();
    s.connect(to).await.unwrap()
}

/// The first bytes of a TLS ClientHello, and no more: a record header announcing 512 bytes
/// and the start of the handshake message. A server waits for the rest.
const PARTIAL_CLIENT_HELLO: &[u8] = &[
    0x16, 0x03, 0x01, 0x02, 0x00, // handshake record, TLS 1.0 framing, 512 bytes
    0x01, 0x00, 0x01, 0xfc, // ClientHello of 508 bytes
    0x03, 0x03, // client version TLS 1.2
];

/// A TLS client of `ca`'s server at `addr` that dials from `from`, for tonic over plain
/// `http://` (the TLS is the connector's; ALPN says h2 as a gRPC client's does).
async fn tls_channel_from(from: &'static str, addr: SocketAddr, ca: &Ca) -> Channel {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(&ca.pem)).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(bete_server::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    Channel::from_shared(format!("http://localhost:{}", addr.port()))
        .unwrap()
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let connector = connector.clone();
            async move {
                let tcp = dial_from(from, addr).await;
                let tls = connector
                    .connect(ServerName::try_from("localhost").unwrap(), tcp)
                    .await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(tls))
            }
        }))
        .await
        .unwrap()
}

/// A counter on `/metrics`, 0 while the metrics listener is not up or the counter not made yet.
async fn metric_or_zero(metrics: SocketAddr, name: &str) -> i64 {
    let Ok(mut s) = tokio::net::TcpStream::connect(metrics).await else {
        return 0;
    };
    let _ = s
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await;
    let mut body = String::new();
    let _ = s.read_to_string(&mut body).await;
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Slow TLS handshakes (issue 26, item 6): connections from one address that send part of a
/// ClientHello and stall hold only that address's share of the cap, a connection over the
/// share is closed at once, the stalled ones are closed by the first-bytes deadline (freeing
/// the share), and meanwhile a fresh client from another address is served over TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_handshakes_hold_only_their_addresses_share() {
    let (data, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ca = Ca::new("bete test CA");
    let metrics = free_addr();
    let srv = tls_server(data.path(), certs.path(), &ca.server(1, "bete"), |c| {
        c.preface_timeout = Duration::from_secs(5);
        c.max_connections = 50;
        c.max_connections_per_address = 4;
        c.metrics_addr = Some(metrics);
    })
    .await;
    let refused = r#"bete_connections_refused_total{listener="grpc",reason="address"}"#;
    let failures = "bete_tls_handshake_failures_total";
    // The attacker, from 127.0.0.3: many stalled handshakes, opened one after another.
    let mut stalled = Vec::new();
    for _ in 0..12 {
        let mut s = dial_from("127.0.0.3", srv.addr).await;
        // Refused connections may be closed before the write: that is fine.
        let _ = s.write_all(PARTIAL_CLIENT_HELLO).await;
        stalled.push(s);
    }
    // Only its share is held: the other 8 were refused and closed at once (well before the
    // 5 s deadline), the first 4 are still open, waiting for the rest of their ClientHello.
    for _ in 0..250 {
        if metric_or_zero(metrics, refused).await >= 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(gauge(metrics, refused).await, 8);
    let mut open = 0;
    for s in stalled.iter_mut() {
        let mut b = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(50), s.read(&mut b)).await {
            Err(_) => open += 1,
            Ok(Ok(0) | Err(_)) => {}
            Ok(Ok(n)) => panic!("the server answered a partial ClientHello with {n} bytes"),
        }
    }
    assert_eq!(open, 4, "the stalled handshakes held more than the share");
    // A fresh client from another address is served over TLS while they stall.
    let ch = tls_channel_from("127.0.0.2", srv.addr, &ca).await;
    try_register(&ch, "beside-the-stalled").await.unwrap();
    // The stalled handshakes are closed by the first-bytes deadline.
    for s in stalled.iter_mut() {
        assert!(
            timeout(10, closed(s)).await.is_ok(),
            "a stalled handshake was not closed by the deadline"
        );
    }
    assert!(gauge(metrics, failures).await >= 4);
    // Their places are given back: the attacker's address may connect again (and finish a
    // handshake, which a refused connection never could).
    let again = tls_channel_from("127.0.0.3", srv.addr, &ca).await;
    try_register(&again, "after-the-stall").await.unwrap();
    assert_eq!(gauge(metrics, refused).await, 8);
    srv.stop().await;
}
