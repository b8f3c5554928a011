//! Compiles `schemas/proto/*.proto` into Rust with protox (a protobuf compiler in Rust), so the
//! build needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../schemas/proto/accounting.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["../schemas/proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
