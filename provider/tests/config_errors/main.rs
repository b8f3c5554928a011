//! Bad configuration is refused with a message that names the file, line, column and field.

#![allow(clippy::unwrap_used)]

mod values;

use std::path::Path;

use accelfed_provider::config::Config;

const GOOD: &str = r#"
[site]
name = "S"

[[static.batch]]
id = "hpc"
manager = "SLURM"

[[static.batch.node_type]]
id = "a100"
count = 2

[[static.batch.node_type.gpu]]
id = "a100"
vendor = "NVIDIA"
model = "NVIDIA A100-SXM4-80GB"
count = 4
memory = "80 GB"

[[static.batch.share]]
id = "gpu"
vos = ["atlas"]
node_types = ["a100"]
"#;

/// Parses `GOOD` with `from` replaced by `to`, expecting an error.
fn error_after(from: &str, to: &str) -> String {
    assert!(
        GOOD.contains(from),
        "test bug: {from:?} not in the base config"
    );
    let source = GOOD.replacen(from, to, 1);
    match Config::parse(Path::new("site.toml"), &source) {
        Ok(_) => panic!("accepted after replacing {from:?} by {to:?}"),
        Err(err) => err.to_string(),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "{message:?} does not mention {part:?}"
        );
    }
}

#[test]
fn the_base_config_is_valid() {
    Config::parse(Path::new("site.toml"), GOOD).unwrap();
}

#[test]
fn malformed_toml_points_at_the_line() {
    let message = error_after("count = 2", "count = = 2");
    assert_mentions(&message, &["site.toml:11:"]);
}

#[test]
fn unknown_keys_are_refused_with_their_name_and_position() {
    let message = error_after("count = 2", "count = 2\ngpu_count = 4");
    assert_mentions(&message, &["site.toml:12:1", "unknown field `gpu_count`"]);
    let message = error_after("[site]", "[sight]\nname = \"x\"\n[site]");
    assert_mentions(&message, &["site.toml:2:", "unknown field `sight`"]);
}

#[test]
fn negative_nan_and_non_numeric_gpu_counts_are_refused() {
    let message = error_after("count = 4", "count = -4");
    assert_mentions(&message, &["site.toml:17:9", "must not be negative"]);
    let message = error_after("count = 4", "count = nan");
    assert_mentions(&message, &["site.toml:17:9", "finite"]);
    let message = error_after("count = 4", "count = \"many\"");
    assert_mentions(&message, &["site.toml:17:9", "\"many\""]);
}

#[test]
fn memory_with_an_unknown_unit_is_refused() {
    let message = error_after("memory = \"80 GB\"", "memory = \"80 XB\"");
    assert_mentions(&message, &["site.toml:18:10", "unknown unit \"XB\""]);
}

#[test]
fn empty_and_padded_strings_are_refused() {
    assert_mentions(
        &error_after("name = \"S\"", "name = \"\""),
        &["site.toml:3:8", "site name must not be empty"],
    );
    assert_mentions(
        &error_after("vos = [\"atlas\"]", "vos = [\" atlas\"]"),
        &["site.toml:22:", "white space"],
    );
    assert_mentions(
        &error_after("vendor = \"NVIDIA\"", "vendor = \"\""),
        &["site.toml:15:", "must not be empty"],
    );
}

#[test]
fn references_and_counts_that_do_not_add_up_name_the_field() {
    let message = error_after("node_types = [\"a100\"]", "node_types = [\"h100\"]");
    assert_mentions(
        &message,
        &[
            "site.toml:23:15",
            "static.batch[0].share[0].node_types[0]",
            "\"h100\" is not defined",
        ],
    );
    let message = error_after("count = 4", "count = 4\nused = 9");
    assert_mentions(
        &message,
        &[
            "site.toml:18:8",
            "static.batch[0].node_type[0].gpu[0].used",
            "9 used plus 0 unavailable GPUs exceed the 8",
        ],
    );
    let message = error_after(
        "node_types = [\"a100\"]",
        "node_types = [\"a100\"]\n[[static.batch.share]]\nid = \"gpu\"\nvos = [\"x\"]\nnode_types = []",
    );
    assert_mentions(
        &message,
        &[
            "static.batch[0].share[1].id",
            "share id \"gpu\" is used twice",
        ],
    );
}

#[test]
fn a_mig_profile_without_mig_virtualization_is_refused() {
    let message = error_after("count = 4", "count = 4\nmig_profile = \"1g.10gb\"");
    assert_mentions(
        &message,
        &[
            "static.batch[0].node_type[0].gpu[0].mig_profile",
            "virtualization = \"mig\"",
        ],
    );
}

#[test]
fn a_fractional_gpu_count_is_accepted() {
    let source = GOOD.replacen("count = 4", "count = 0.5", 1);
    Config::parse(Path::new("site.toml"), &source).unwrap();
}

/// The example site publishes a cloud; without the GOCDB id EGI's cloud-info-api would skip it, so
/// validation refuses it and points at the cloud.
#[test]
fn a_cloud_without_a_gocdb_id_is_refused_at_the_cloud() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let source = std::fs::read_to_string(&example).unwrap();
    let gocdb_line = source
        .lines()
        .find(|line| line.starts_with("gocdb_id"))
        .expect("examples/site.toml sets gocdb_id");
    Config::parse(Path::new("site.toml"), &source).unwrap();
    let without = source.replacen(gocdb_line, "", 1);
    let cloud_line = without
        .lines()
        .position(|line| line == "[[static.cloud]]")
        .expect("examples/site.toml has a cloud")
        + 2;
    let message = Config::parse(Path::new("site.toml"), &without)
        .unwrap_err()
        .to_string();
    assert_mentions(
        &message,
        &[
            &format!("site.toml:{cloud_line}:6: static.cloud[0].id: \"cloud\""),
            "gocdb_id",
        ],
    );
    // A batch-only site needs none.
    Config::parse(Path::new("site.toml"), GOOD).unwrap();
}

#[test]
fn a_sharing_of_zero_replicas_or_more_slices_than_the_gpu_has_is_refused() {
    for sharing in [
        r#"{ mode = "time-slicing", replicas = 0 }"#,
        r#"{ mode = "mig", profile = "1g.10gb", slices = 8, of = 7 }"#,
        r#"{ mode = "vgpu", vgpu_type = "GRID A100-10C", per_gpu = 0 }"#,
    ] {
        let message = error_after(
            "memory = \"80 GB\"\n",
            &format!("memory = \"80 GB\"\nsharing = {sharing}\n"),
        );
        assert_mentions(
            &message,
            &["site.toml:", "static.batch[0].node_type[0].gpu[0].sharing"],
        );
    }
    let fine = GOOD.replacen(
        "memory = \"80 GB\"\n",
        "memory = \"80 GB\"\nsharing = { mode = \"mps\", replicas = 4 }\n",
        1,
    );
    Config::parse(Path::new("site.toml"), &fine).unwrap();
}

#[test]
fn a_count_beyond_any_site_is_refused_where_it_is_written() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let source = std::fs::read_to_string(&example).unwrap();
    let line = source
        .lines()
        .position(|line| line == "max_gpus_per_job = 16")
        .expect("examples/site.toml limits a share")
        + 1;
    let huge = source.replacen("max_gpus_per_job = 16", "max_gpus_per_job = 1e308", 1);
    let message = Config::parse(Path::new("site.toml"), &huge)
        .unwrap_err()
        .to_string();
    assert_mentions(
        &message,
        &[
            &format!("site.toml:{line}:20:"),
            "more GPUs than any site holds",
        ],
    );
}

#[test]
fn a_huge_bad_value_is_quoted_as_an_excerpt_with_its_position() {
    let huge = "x".repeat(1_000_000);
    for (from, to) in [
        ("count = 4", format!("count = \"{huge}\"")),
        (
            "manager = \"SLURM\"",
            format!("manager = \"SLURM\"\n{huge} = 1"),
        ),
    ] {
        let message = error_after(from, &to);
        assert!(
            message.len() < 400,
            "{} bytes: {}",
            message.len(),
            &message[..400]
        );
        assert!(
            message.contains(&format!("{}...", "x".repeat(40))),
            "{message}"
        );
        assert!(message.starts_with("site.toml:"), "{message}");
    }
}
