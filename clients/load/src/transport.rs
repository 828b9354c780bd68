//! How the harness reaches a server: plaintext HTTP/2 (a local or loopback server), or TLS
//! (rustls) for a hosted deployment, where bearer tokens must not cross the network in clear.

use std::path::Path;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use crate::LoadError;
use crate::cli::Options;

/// Plaintext, or TLS with what to trust and what to present.
#[derive(Clone, Debug, Default)]
pub struct Transport {
    tls: Option<ClientTlsConfig>,
}

fn read(path: &Path, flag: &str) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|e| LoadError::Options(format!("{flag} {}: {e}", path.display())))
}

impl Transport {
    /// TLS when `--ca-cert` or `--client-cert` is given or an address says `https://`.
    pub fn from_options(opts: &Options) -> Result<Transport, LoadError> {
        let https = opts
            .server
            .iter()
            .chain(&opts.targets)
            .any(|a| a.starts_with("https://"));
        if !(https || opts.ca_cert.is_some() || opts.client_cert.is_some()) {
            return Ok(Transport::default());
        }
        let mut config = ClientTlsConfig::new();
        config = match &opts.ca_cert {
            Some(path) => {
                let pem = read(path, "--ca-cert")?;
                if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
                    return Err(LoadError::Options(format!(
                        "--ca-cert {}: no PEM certificate in it",
                        path.display()
                    )));
                }
                config.ca_certificate(Certificate::from_pem(pem))
            }
            None => config.with_native_roots(),
        };
        if let (Some(cert), Some(key)) = (&opts.client_cert, &opts.client_key) {
            config = config.identity(Identity::from_pem(
                read(cert, "--client-cert")?,
                read(key, "--client-key")?,
            ));
        }
        if let Some(name) = &opts.tls_domain {
            config = config.domain_name(name.clone());
        }
        Ok(Transport { tls: Some(config) })
    }

    /// Whether calls go over TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// `scheme://host:port` from `host:port` (or a full URI as given): `https` with TLS.
    pub fn uri(&self, addr: &str) -> String {
        if addr.contains("://") {
            addr.to_string()
        } else if self.is_tls() {
            format!("https://{addr}")
        } else {
            format!("http://{addr}")
        }
    }

    /// An endpoint for `uri`, with TLS when this transport has it. An `http://` URI is dialled
    /// over TLS too then (the flags asked for it).
    pub fn endpoint(&self, uri: &str) -> Result<Endpoint, LoadError> {
        let uri = match (&self.tls, uri.strip_prefix("http://")) {
            (Some(_), Some(rest)) => format!("https://{rest}"),
            _ => uri.to_string(),
        };
        let endpoint = Endpoint::from_shared(uri.clone())
            .map_err(|e| LoadError::Options(format!("bad server address {uri}: {e}")))?;
        match &self.tls {
            Some(tls) => Ok(endpoint.tls_config(tls.clone())?),
            None => Ok(endpoint),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn tls_follows_the_flags_and_the_scheme() {
        let plain = Transport::from_options(&Options::parse_from(["bete-load"])).unwrap();
        assert!(!plain.is_tls());
        assert_eq!(plain.uri("h:1"), "http://h:1");
        let o = Options::parse_from(["bete-load", "--server", "https://h:1"]);
        let tls = Transport::from_options(&o).unwrap();
        assert!(tls.is_tls());
        assert_eq!(tls.uri("h:1"), "https://h:1");
        assert!(tls.endpoint("http://h:1").is_ok());
        let missing = Options::parse_from(["bete-load", "--ca-cert", "/nonexistent/ca.crt"]);
        let e = Transport::from_options(&missing).unwrap_err().to_string();
        assert!(e.contains("--ca-cert /nonexistent/ca.crt"), "{e}");
    }
}
