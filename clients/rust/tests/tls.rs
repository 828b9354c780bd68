//! The client library and the `bete` CLI over TLS against the real server with a test
//! certificate (made here with rcgen): a bot plays a match over https://, a client that does not
//! trust the server's CA is refused, and `bete rotate-token` replaces a token over TLS.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bete_client::{Client, TlsOptions, pb};
use common::spawn_server;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

const BETE: &str = env!("CARGO_BIN_EXE_bete");

/// Writes ca.pem, tls.crt and tls.key (for localhost) into `dir`.
fn certificates(dir: &Path) {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "bete test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    std::fs::write(
        dir.join("ca.pem"),
        ca.self_signed(&ca_key).expect("ca").pem(),
    )
    .expect("ca");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("sign");
    std::fs::write(dir.join("tls.crt"), cert.pem()).expect("cert");
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("key");
}

async fn bete(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        Command::new(BETE)
            .args(args)
            .env_remove("BETE_TOKEN")
            .env_remove("BETE_SERVER")
            .output()
            .expect("run")
    })
    .await
    .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_and_the_cli_play_over_tls() {
    let (data, certs) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    certificates(certs.path());
    let config = bete_server::ServerConfig {
        data_dir: data.path().to_path_buf(),
        heartbeat_interval: Duration::from_millis(500),
        tls: Some(bete_server::tls::TlsSettings::new(
            certs.path().join("tls.crt"),
            certs.path().join("tls.key"),
        )),
        ..Default::default()
    };
    let (addr, _stop, _task) = spawn_server(config);
    let url = format!("https://localhost:{}", addr.port());
    let ca = certs.path().join("ca.pem").display().to_string();

    // The library: trusting the test CA, a bot registers and creates a table.
    let tls = TlsOptions {
        ca_cert: Some(std::fs::read(&ca).expect("ca")),
        ..Default::default()
    };
    let client = Client::connect_with(&url, Some(&tls))
        .await
        .expect("connect");
    let me = client.register("tls-lib", "tests").await.expect("register");
    let table = client
        .create_table(common::house_table(pb::Ruleset::Bete, 3, 0))
        .await
        .expect("create");
    assert!(!table.table_id.is_empty());
    // Without the CA (the system's roots do not know it), the connection is refused.
    let untrusted = match Client::connect(&url).await {
        Err(_) => true,
        Ok(c) => c.register("x", "tests").await.is_err(),
    };
    assert!(untrusted, "a server of an unknown CA was trusted");

    // The CLI: a whole match over TLS with --ca-cert.
    let out = bete(
        [
            "bot",
            "--server",
            &url,
            "--ca-cert",
            &ca,
            "--strategy",
            "random",
            "--tables",
            "1",
            "--name",
            "tls-cli",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert!(
        out.status.success(),
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 matches"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // `bete rotate-token` over TLS: the new token on stdout; the old one is revoked.
    let out = bete(
        [
            "rotate-token",
            "--server",
            &url,
            "--ca-cert",
            &ca,
            "--token",
            &me.token,
            &me.bot_id,
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(new.starts_with("bete_") && new != me.token, "{new}");
    let old = Client::connect_with(&url, Some(&tls))
        .await
        .expect("connect");
    old.set_token(&me.token).expect("token");
    let err = old
        .get_seat_view(&table.table_id)
        .await
        .expect_err("revoked");
    assert_eq!(err.reason(), Some(pb::ErrorReason::TokenRevoked), "{err}");
    let fresh = Client::connect_with(&url, Some(&tls))
        .await
        .expect("connect");
    fresh.set_token(&new).expect("token");
    fresh
        .get_table(&table.table_id)
        .await
        .expect("the new token works");
}
