//! A hosted deployment speaks TLS: the real `bete-load` binary plays against a real server
//! serving a certificate of a CA made here (rcgen), trusting that CA (`--ca-cert`) and checking
//! the certificate for the name it carries rather than the address dialled (`--tls-domain`, as
//! the Job does with the Service's in-cluster name). The same run without the name is refused
//! by the certificate check: the check is real.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

const NAME: &str = "grpc.bete.example.test";

/// A CA's PEM, and a certificate for [`NAME`] it signed with its key.
fn identities() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "bete-load test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec![NAME.to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    (ca_pem, leaf.pem(), key.serialize_pem())
}

async fn tls_server(dir: &std::path::Path) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let (ca, cert, key) = identities();
    std::fs::write(dir.join("ca.crt"), ca).unwrap();
    std::fs::write(dir.join("tls.crt"), cert).unwrap();
    std::fs::write(dir.join("tls.key"), key).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.join("data"),
        metrics_addr: None,
        web_addr: None,
        house_tables: 0,
        tls: Some(bete_server::tls::TlsSettings::new(
            dir.join("tls.crt"),
            dir.join("tls.key"),
        )),
        ..bete_server::ServerConfig::default()
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        bete_server::run(listener, config, async move {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    (addr, tx)
}

fn load(addr: SocketAddr, dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bete-load"))
        .arg(format!("--server=https://{addr}"))
        .arg(format!("--ca-cert={}", dir.join("ca.crt").display()))
        .args([
            "--tables",
            "2",
            "--seats",
            "3",
            "--duration",
            "1s",
            "--drain",
            "2s",
        ])
        .args([
            "--connections",
            "1",
            "--ceiling-duration",
            "200ms",
            "--quiet",
        ])
        .args(["--setup-timeout", "10s", "--report", "-"])
        .args(extra)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_plays_over_tls_checking_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = tls_server(dir.path()).await;
    let dir2 = dir.path().to_path_buf();
    let ok = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || load(addr, &dir2, &["--tls-domain", NAME])),
    )
    .await
    .expect("bounded")
    .unwrap();
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&ok.stdout).expect("the JSON report on stdout");
    assert!(report["moves"].as_u64().unwrap() > 0, "{stderr}");
    assert_eq!(report["errors"]["total"].as_u64(), Some(0), "{stderr}");

    // The certificate names NAME, not 127.0.0.1: without --tls-domain the check refuses it.
    let dir2 = dir.path().to_path_buf();
    let refused = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || load(addr, &dir2, &[])),
    )
    .await
    .expect("bounded")
    .unwrap();
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "no report from a refused run");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("did not become healthy"), "{stderr}");
    assert!(stderr.contains("invalid peer certificate"), "{stderr}");
}
