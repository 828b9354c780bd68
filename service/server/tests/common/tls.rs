//! Test identities: a CA made here with rcgen and the server, node and client certificates it
//! signs (tls.rs, cluster_tls.rs).

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber,
};
use tokio_rustls::rustls::pki_types::CertificateDer;

/// A CA and what it signs.
pub struct Ca {
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A certificate and its key, as PEM.
pub struct Leaf {
    pub cert: String,
    pub key: String,
    pub der: CertificateDer<'static>,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).unwrap().pem();
        Ca {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `localhost` and 127.0.0.1 with this serial and common name.
    pub fn server(&self, serial: u64, name: &str) -> Leaf {
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params.serial_number = Some(SerialNumber::from(serial));
        params.distinguished_name.push(DnType::CommonName, name);
        self.sign(params)
    }

    /// A client certificate (a bot farm's).
    pub fn client(&self, name: &str) -> Leaf {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    /// A node's certificate for these DNS names (clients use `localhost`), written under
    /// `dir` as `<file>.crt` and `<file>.key`; also good as a client certificate (both usages).
    pub fn node_cert(&self, dir: &Path, file: &str, names: &[&str]) -> (PathBuf, PathBuf) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name.push(DnType::CommonName, file);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let leaf = self.sign(params);
        let (c, k) = (
            dir.join(format!("{file}.crt")),
            dir.join(format!("{file}.key")),
        );
        std::fs::write(&c, leaf.cert).unwrap();
        std::fs::write(&k, leaf.key).unwrap();
        (c, k)
    }

    /// The CA's certificate written to `dir/file`.
    pub fn write(&self, dir: &Path, file: &str) -> PathBuf {
        let p = dir.join(file);
        std::fs::write(&p, &self.pem).unwrap();
        p
    }

    fn sign(&self, params: CertificateParams) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert: cert.pem(),
            key: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }
}
