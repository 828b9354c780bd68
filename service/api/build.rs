//! Compiles `proto/bete/v1/*.proto` into Rust (messages, tonic server and client) with the
//! vendored protoc, so no system protoc is needed, and writes the file descriptor set that
//! tonic-reflection serves.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_root = PathBuf::from("../../proto");
    let proto_dir = proto_root.join("bete/v1");
    let mut protos: Vec<PathBuf> = std::fs::read_dir(&proto_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    // A stable order keeps the generated code and the descriptor set identical between builds.
    protos.sort();
    println!("cargo:rerun-if-changed={}", proto_dir.display());

    // The protoc path goes through the config rather than the PROTOC variable: edition 2024 makes
    // `set_var` unsafe and the workspace forbids unsafe code.
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    let wkt_include = protoc_bin_vendored::include_path()?;

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // The services only with the `grpc` feature (the messages alone need no tonic).
    let grpc = std::env::var_os("CARGO_FEATURE_GRPC").is_some();
    tonic_prost_build::configure()
        .build_server(grpc)
        .build_client(grpc)
        .file_descriptor_set_path(out_dir.join("bete_v1_descriptor.bin"))
        // Small first buffers per call (src/codec.rs); the wire format is unchanged.
        .codec_path("crate::codec::ProstCodec")
        .compile_with_config(config, &protos, &[proto_root, wkt_include])?;
    Ok(())
}
