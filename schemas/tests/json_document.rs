mod common;
use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
#[test]
fn golden_sample() {
    let bytes = json::render(&sample::snapshot("SAMPLE-SITE"));
    common::assert_golden("sample.glue21.json", &bytes);
}
