//! # bete-api
//!
//! The `bete.v1` gRPC API: the Rust code generated from `proto/bete/v1` (messages, tonic servers
//! and clients) under [`pb`], and [`convert`], the one place where `bete-rules` types become
//! protobuf messages for a recipient, and protobuf input becomes engine types.

#[cfg(feature = "grpc")]
pub mod codec;
pub mod convert;

/// Generated messages, enums, `table_service_server` / `table_service_client` and
/// `bot_service_server` / `bot_service_client` for package `bete.v1`.
#[allow(
    missing_docs,
    clippy::all,
    clippy::pedantic,
    missing_debug_implementations
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/bete.v1.rs"));
}

/// The encoded `FileDescriptorSet` of every `bete.v1` file, for tonic-reflection
/// (`Builder::register_encoded_file_descriptor_set`).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/bete_v1_descriptor.bin"));

/// The `google.rpc.ErrorInfo.domain` of every error the server returns.
pub const ERROR_DOMAIN: &str = "bete.v1";

impl pb::ErrorReason {
    /// The string sent in `google.rpc.ErrorInfo.reason`: the enum value name without its
    /// `ERROR_REASON_` prefix, e.g. `"ILLEGAL_ACTION"`.
    pub fn reason(self) -> &'static str {
        let name = self.as_str_name();
        name.strip_prefix("ERROR_REASON_").unwrap_or(name)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn descriptor_set_holds_every_service() {
        let fds = prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
        let services: Vec<String> = fds
            .file
            .iter()
            .filter(|f| f.package() == "bete.v1")
            .flat_map(|f| f.service.iter().map(|s| s.name().to_string()))
            .collect();
        assert!(
            services.contains(&"TableService".to_string()),
            "{services:?}"
        );
        assert!(services.contains(&"BotService".to_string()), "{services:?}");
    }

    #[test]
    fn error_reasons_drop_their_prefix() {
        assert_eq!(pb::ErrorReason::IllegalAction.reason(), "ILLEGAL_ACTION");
        assert_eq!(
            pb::ErrorReason::DuplicateRequestConflict.reason(),
            "DUPLICATE_REQUEST_CONFLICT"
        );
        assert_eq!(
            pb::ErrorReason::FromSeqOutOfRange.reason(),
            "FROM_SEQ_OUT_OF_RANGE"
        );
    }
}
