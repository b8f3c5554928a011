//! The registry's OpenAPI description states the bounds the server enforces on the offer filters,
//! so a client that obeys it is never refused (schemathesis's "schema-valid request rejected" found
//! `min_memory_mb=-1` and `min_gpus=1.6e16` described as valid and answered 400).

use accelfed_schemas::gpu::GpuCount;

const SPEC: &str = include_str!("../../docs/registry-openapi.yaml");

/// The schema of query parameter `name`, as written on its one line.
fn parameter(name: &str) -> &'static str {
    let key = format!("{{name: {name}, in: query, schema: {{");
    let line = SPEC
        .lines()
        .find(|line| line.contains(&key))
        .unwrap_or_else(|| panic!("no parameter {name} in docs/registry-openapi.yaml"));
    let start = line.find(&key).map_or(0, |at| at + key.len());
    let end = line[start..].find('}').map_or(line.len(), |at| start + at);
    &line[start..end]
}

#[test]
fn gpu_count_filters_are_bounded_as_gpu_counts_are() {
    let max = format!("maximum: {}", GpuCount::MAX as u64);
    for name in ["min_gpus", "min_slices", "min_free"] {
        let schema = parameter(name);
        assert!(schema.contains("minimum: 0"), "{name}: {schema}");
        assert!(schema.contains(&max), "{name}: {schema} lacks {max}");
    }
}

#[test]
fn memory_filter_is_a_u64() {
    let schema = parameter("min_memory_mb");
    assert!(schema.contains("type: integer"), "{schema}");
    assert!(schema.contains("minimum: 0"), "{schema}");
    assert!(
        schema.contains(&format!("maximum: {}", u64::MAX)),
        "{schema}"
    );
}

#[test]
fn offers_paging_is_bounded_as_the_server_bounds_it() {
    use accelfed_central::{MAX_PAGE, MAX_PER_PAGE};
    let limit = parameter("limit");
    assert!(limit.contains("minimum: 1"), "{limit}");
    assert!(
        limit.contains(&format!("maximum: {MAX_PER_PAGE}")),
        "{limit}"
    );
    let page = parameter("page");
    assert!(page.contains("minimum: 1"), "{page}");
    assert!(page.contains(&format!("maximum: {MAX_PAGE}")), "{page}");
}
