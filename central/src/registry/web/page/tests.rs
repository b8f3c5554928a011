use super::*;
use crate::registry::web::free::{Seen, free_gpus};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::ServiceKind;

fn offer(site: &str, name: &str) -> Offer {
    let half = GpuCount::new(0.5).unwrap();
    Offer {
        site: site.into(),
        service_id: "svc".into(),
        service_kind: ServiceKind::Cloud,
        resource_id: "id\"><script>x</script>".into(),
        resource_name: name.into(),
        gpus_each: half,
        slots_each: half,
        physical_each: half,
        slot_share: None,
        gets: "0.5 x NVIDIA A100".into(),
        vendor: "NVIDIA".into(),
        model: "NVIDIA A100".into(),
        memory_mb: Some(40_960),
        compute_capability: None,
        sharing: "passthrough".into(),
        mig_profile: None,
        cpus: None,
        ram_mb: None,
        free: Some(GpuCount::whole(3)),
        total: Some(GpuCount::whole(8)),
        free_physical: Some(GpuCount::whole(3)),
        total_physical: Some(GpuCount::whole(8)),
        pool: "pool-1".into(),
        vos: vec!["atlas".into()],
        vo_free: Vec::new(),
        expires: DateTime::<Utc>::MAX_UTC,
        fresh: true,
    }
}

fn render_offers(
    params: &FormParams,
    offers: &[Offer],
    sites: &[SiteStatus],
    usage: &UsageState,
) -> String {
    let free = free_gpus(offers.iter().map(Seen::from));
    // A model named like markup, in the capacity chart, its table and its CSV link too.
    let capacity = crate::registry::capacity::OverTime {
        instants: vec![DateTime::<Utc>::UNIX_EPOCH],
        models: [(
            "<script>alert(2)</script>".to_owned(),
            vec![crate::registry::capacity::Level::default()],
        )]
        .into(),
    };
    render(&PageData {
        params,
        problems: &["<b>bad</b>".to_owned()],
        offers,
        offer_count: offers.len(),
        sites,
        free: &free,
        vo_free: None,
        usage,
        capacity: &capacity,
        now: DateTime::<Utc>::UNIX_EPOCH,
    })
}

#[test]
fn names_and_form_values_are_escaped_everywhere() {
    let params = FormParams {
        model: Some("\"><script>alert(1)</script>".into()),
        site: Some("<i>s</i>".into()),
        ..FormParams::default()
    };
    let offers = [offer(
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
    )];
    let sites = [SiteStatus {
        site: "<script>s</script>".into(),
        received_at: DateTime::<Utc>::UNIX_EPOCH,
        expires: DateTime::<Utc>::UNIX_EPOCH,
        fresh: false,
        offers: 1,
    }];
    let html = render_offers(
        &params,
        &offers,
        &sites,
        &UsageState::Unavailable("<i>down</i>".into()),
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<b>bad"), "{html}");
    assert!(!html.contains("<i>"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("value=\"&quot;&gt;&lt;script&gt;"));
    assert!(
        html.contains("<h1>Site &lt;i&gt;s&lt;/i&gt;</h1>"),
        "{html}"
    );
    assert!(html.contains("3 / 8"));
    assert!(html.contains("class=\"stale\">stale for 0 min"));
    // The site's page link carries the name percent-encoded.
    assert!(
        html.contains("href=\"?site=%3Cscript%3Es%3C%2Fscript%3E\""),
        "{html}"
    );
}

#[test]
fn counts_print_as_the_table_prints_them() {
    let slices = Offer {
        gpus_each: GpuCount::ZERO,
        slot_share: Some("1/7".into()),
        free: Some(GpuCount::whole(36)),
        total: Some(GpuCount::whole(56)),
        free_physical: Some(GpuCount::new(36.0 / 7.0).unwrap()),
        ..offer("S", "h100-mig")
    };
    let html = render_offers(
        &FormParams::default(),
        &[slices],
        &[],
        &UsageState::NoRepository,
    );
    // Whole counts without a fraction, others to the thousandth, as `accelfed query` does.
    assert!(html.contains("<td>0</td>"), "{html}");
    assert!(
        html.contains("<td>5.143 / 8 (36 / 56 slots)</td>"),
        "{html}"
    );
    // The federation's free GPUs: the one pool.
    assert!(
        html.contains("<strong id=\"free-all\">5.143</strong>"),
        "{html}"
    );
}

#[test]
fn usage_that_is_not_public_is_not_shown() {
    let html = render_offers(&FormParams::default(), &[], &[], &UsageState::NotPublic);
    assert!(html.contains("Usage figures are not public here"), "{html}");
    assert!(!html.contains("id=\"idle\""), "{html}");
}
