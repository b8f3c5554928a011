//! Compiles `schemas/proto/*.proto` into Rust with protox (a protobuf compiler in Rust), so the
//! build needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../schemas/proto/accounting.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["../schemas/proto"])?;
    // The request carries each record as its own bytes (`wire::encoded`), so the service decodes
    // records one by one: one record that does not decode (invalid UTF-8 in a string, a bad tag)
    // is refused alone instead of failing the whole call.
    tonic_prost_build::configure()
        .extern_path(
            ".accelfed.accounting.v1.SubmitRequest",
            "crate::wire::encoded::EncodedSubmitRequest",
        )
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
