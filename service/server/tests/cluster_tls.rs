//! Forwarding between nodes that serve TLS: real `bete-server` processes on one PostgreSQL,
//! certificates made here with rcgen. Nodes dial each other by address and check the peer's
//! certificate against `--peer-tls-name` and `--peer-ca`; with `--tls-client-auth required`
//! they present their own certificate. A peer that fails the check is never forwarded to.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh); without it every test here skips, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bete_api::pb;
use common::pg::*;
use common::tls::Ca;
use common::*;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

const SECRET: &str = "test-cluster-secret";
/// The name every node's certificate carries for its peers (as the headless Service's name).
const PEER_NAME: &str = "bete-peers.test";

/// The flags of a node serving TLS with `cert`, trusting `ca` for clients (when `required`)
/// and peers.
fn tls_flags(cert: &(PathBuf, PathBuf), ca: &Path, required: bool) -> Vec<String> {
    let mut f: Vec<String> = [
        "--cluster-secret",
        SECRET,
        "--tls-cert",
        cert.0.to_str().unwrap(),
        "--tls-key",
        cert.1.to_str().unwrap(),
        "--peer-tls-name",
        PEER_NAME,
        "--peer-ca",
        ca.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if required {
        f.extend(
            [
                "--tls-client-ca",
                ca.to_str().unwrap(),
                "--tls-client-auth",
                "required",
            ]
            .map(String::from),
        );
    }
    f
}

fn start(url: &str, id: &str, dir: &tempfile::TempDir, flags: &[String]) -> Node {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Node::start_with(url, id, "1.5", dir, &flags)
}

/// A client channel over TLS to `node` (as `localhost`), trusting `cas`, with a certificate
/// when given.
async fn tls_connect(node: &Node, cas: &[&Ca], identity: Option<&(PathBuf, PathBuf)>) -> Channel {
    let mut config = ClientTlsConfig::new()
        .ca_certificates(cas.iter().map(|c| Certificate::from_pem(&c.pem)))
        .domain_name("localhost");
    if let Some((c, k)) = identity {
        config = config.identity(Identity::from_pem(
            std::fs::read(c).unwrap(),
            std::fs::read(k).unwrap(),
        ));
    }
    let endpoint = Channel::from_shared(format!("https://{}", node.addr))
        .unwrap()
        .tls_config(config)
        .unwrap();
    for _ in 0..400 {
        if let Ok(ch) = endpoint.connect().await {
            return ch;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{}: {}", node.addr, node.log_text());
}

/// Two nodes over TLS: a read, moves and a WatchTable through the node that does not play the
/// table reach its owner, with and without required client certificates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_serving_tls_forward_to_each_other_over_tls() {
    for required in [false, true] {
        let Some(url) = fresh_database().await else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let ca = Ca::new("bete test CA");
        let ca_file = ca.write(dir.path(), "ca.pem");
        // One certificate for every node, as the cert-manager Certificate makes.
        let cert = ca.node_cert(dir.path(), "node", &["localhost", PEER_NAME]);
        let flags = tls_flags(&cert, &ca_file, required);
        let a = start(&url, "a", &dir, &flags);
        let b = start(&url, "b", &dir, &flags);
        let farm = required.then(|| ca.node_cert(dir.path(), "farm", &["farm.test"]));
        let ch_a = tls_connect(&a, &[&ca], farm.as_ref()).await;
        let ch_b = tls_connect(&b, &[&ca], farm.as_ref()).await;
        let me = register(&ch_a, "tls-forwarded").await;
        let mut on_a = me.client;
        let mut on_b = client_with(&ch_b, Some(&me.token));
        let id = new_table(&mut on_b).await;
        assert_eq!(owner(&url, &id).await.0.as_deref(), Some("b"));

        let t = on_a
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        assert_eq!(t.table_id, id);
        let mut stream = on_a
            .watch_table(pb::WatchTableRequest {
                table_id: id.clone(),
                from_seq: None,
            })
            .await
            .unwrap()
            .into_inner();
        let first = stream.message().await.unwrap().unwrap();
        let Some(pb::watch_table_response::Kind::Snapshot(view)) = first.kind else {
            panic!("{first:?}");
        };
        assert_eq!(view.viewer_seat, Some(0));
        let before = log_len(&url, &id).await;
        let mut acked = Vec::new();
        play(&mut on_a, &id, 2, &mut acked).await.unwrap();
        assert_eq!(acked.len(), 2);
        assert!(log_len(&url, &id).await > before, "the owner committed");
        assert_eq!(
            owner(&url, &id).await.0.as_deref(),
            Some("b"),
            "never moved"
        );
        // The moves reach the stream opened through `a`.
        let event = timeout(10, async {
            loop {
                let m = stream.message().await.unwrap().unwrap();
                if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind
                    && e.seq > view.seq
                {
                    return e;
                }
            }
        })
        .await
        .unwrap();
        assert!(event.seq > view.seq);
        assert!(
            !a.log_text().contains("owner unreachable"),
            "{}",
            a.log_text()
        );
    }
}

/// A peer whose certificate lacks the peer name, or is signed by a CA the node does not trust,
/// is not forwarded to: a move gets OWNER_UNREACHABLE and is not committed; a read is not
/// answered OK either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_failing_the_certificate_check_is_not_forwarded_to() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("bete test CA");
    let other = Ca::new("someone else's CA");
    let ca_file = ca.write(dir.path(), "ca.pem");
    let good = ca.node_cert(dir.path(), "good", &["localhost", PEER_NAME]);
    let unnamed = ca.node_cert(dir.path(), "unnamed", &["localhost"]);
    let stranger = other.node_cert(dir.path(), "stranger", &["localhost", PEER_NAME]);
    let a = start(&url, "a", &dir, &tls_flags(&good, &ca_file, false));
    let b = start(&url, "b", &dir, &tls_flags(&unnamed, &ca_file, false));
    let c = start(&url, "c", &dir, &tls_flags(&stranger, &ca_file, false));
    let ch_a = tls_connect(&a, &[&ca], None).await;
    let me = register(&ch_a, "tls-refused").await;
    let mut on_a = me.client;
    for peer in [&b, &c] {
        let ch = tls_connect(peer, &[&ca, &other], None).await;
        let mut there = client_with(&ch, Some(&me.token));
        let id = new_table(&mut there).await;
        let v = my_turn(&mut there, &id).await;
        let before = log_len(&url, &id).await;
        let s = on_a
            .submit_action(pb::SubmitActionRequest {
                table_id: id.clone(),
                action: Some(v.legal_actions[0].clone()),
                expected_seq: v.seq,
                request_id: String::new(),
            })
            .await
            .unwrap_err();
        assert_eq!(reason(&s), "OWNER_UNREACHABLE", "{s:?}");
        assert_eq!(log_len(&url, &id).await, before, "nothing committed");
        let r = on_a
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await;
        let s = r.unwrap_err();
        assert!(
            ["OWNER_UNREACHABLE", "TABLE_ELSEWHERE"].contains(&reason(&s).as_str()),
            "{s:?}"
        );
        // The owner still has it, untouched.
        assert_eq!(my_turn(&mut there, &id).await.seq, v.seq);
    }
}

/// A node serving TLS with a cluster secret but no peer name or CA does not start, and says
/// what to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_cluster_secret_needs_the_peer_name_and_ca() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("bete test CA");
    let cert = ca.node_cert(dir.path(), "node", &["localhost", PEER_NAME]);
    let flags: Vec<String> = tls_flags(&cert, &ca.write(dir.path(), "ca.pem"), false)
        .into_iter()
        .take(6)
        .collect();
    let mut n = start(&url, "lonely", &dir, &flags);
    let status = timeout(20, async {
        loop {
            if let Some(s) = n.child.try_wait().unwrap() {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap();
    assert!(!status.success());
    let log = n.log_text();
    assert!(
        log.contains("--peer-tls-name") && log.contains("--peer-ca"),
        "{log}"
    );
}
