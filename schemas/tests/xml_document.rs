//! The GLUE 2.0 XML rendering read back with quick-xml's reader: well-formed, every entity present,
//! escaping that round-trips, and the golden file.

mod common;

use accelfed_schemas::glue::SiteSnapshot;
use accelfed_schemas::glue::sample;
use accelfed_schemas::render::ldif::gpu_info;
use accelfed_schemas::render::xml;
use quick_xml::Reader;
use quick_xml::events::Event;

/// What a reader sees: each element's path of names and its text, plus the root's attributes.
#[derive(Debug, Default)]
struct Parsed {
    /// `(element name, unescaped text)` for every element with text.
    texts: Vec<(String, String)>,
    root: String,
    root_namespace: Option<String>,
    /// `(element name, attribute name, unescaped value)`.
    attributes: Vec<(String, String, String)>,
}

impl Parsed {
    fn values<'a>(&'a self, element: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.texts
            .iter()
            .filter(move |(name, _)| name == element)
            .map(|(_, text)| text.as_str())
    }
}

/// Parses the whole document; panics on anything not well-formed (mismatched end tags, bad escapes,
/// unclosed elements).
fn parse(bytes: &[u8]) -> Parsed {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut parsed = Parsed::default();
    let mut stack: Vec<String> = Vec::new();
    let mut buf = Vec::new();
    // An element's text, which quick-xml gives in pieces: plain runs and, since 0.38, each entity
    // or character reference (`&amp;`, `&#233;`) as an event of its own.
    let mut text = String::new();
    loop {
        match reader.read_event_into(&mut buf).expect("well-formed XML") {
            Event::Start(start) => {
                text.clear();
                let name = String::from_utf8(start.name().as_ref().to_vec()).expect("UTF-8");
                for attribute in start.attributes() {
                    let attribute = attribute.expect("well-formed attribute");
                    let key = String::from_utf8(attribute.key.as_ref().to_vec()).expect("UTF-8");
                    let value = attribute
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .expect("valid escapes")
                        .into_owned();
                    if stack.is_empty() && key == "xmlns" {
                        parsed.root_namespace = Some(value.clone());
                    }
                    parsed.attributes.push((name.clone(), key, value));
                }
                if stack.is_empty() {
                    parsed.root = name.clone();
                }
                stack.push(name);
            }
            Event::End(_) => {
                if !text.trim().is_empty() {
                    let element = stack.last().expect("text inside an element").clone();
                    parsed.texts.push((element, std::mem::take(&mut text)));
                }
                text.clear();
                stack.pop().expect("an end tag closes an open element");
            }
            Event::Text(run) => text.push_str(&run.decode().expect("UTF-8")),
            Event::GeneralRef(reference) => {
                if let Some(c) = reference
                    .resolve_char_ref()
                    .expect("a valid character reference")
                {
                    text.push(c);
                } else {
                    let name = reference.decode().expect("UTF-8");
                    let resolved = quick_xml::escape::resolve_predefined_entity(&name)
                        .unwrap_or_else(|| panic!("an entity XML predefines: &{name};"));
                    text.push_str(resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    parsed
}

fn render(snapshot: &SiteSnapshot) -> Parsed {
    parse(&xml::render(snapshot))
}

#[test]
fn the_document_is_well_formed_glue20() {
    let parsed = render(&sample::snapshot("SAMPLE-SITE"));
    assert_eq!(parsed.root, "Domains");
    assert_eq!(parsed.root_namespace.as_deref(), Some(xml::NAMESPACE));
    let base = |element: &str| {
        parsed
            .attributes
            .iter()
            .find(|(name, key, _)| name == element && key == "BaseType")
            .map(|(_, _, value)| value.clone())
    };
    assert_eq!(base("AdminDomain").as_deref(), Some("Domain"));
    assert_eq!(base("ComputingService").as_deref(), Some("Service"));
    assert_eq!(base("ExecutionEnvironment").as_deref(), Some("Resource"));
    assert!(
        parsed
            .attributes
            .iter()
            .any(|(_, key, value)| key == "CreationTime" && value == "2026-11-01T12:00:00Z")
    );
}

#[test]
fn every_entity_is_in_the_document() {
    let snapshot = sample::snapshot("SAMPLE-SITE");
    let parsed = render(&snapshot);
    let ids: Vec<&str> = parsed.values("ID").collect();
    let other_info: Vec<&str> = parsed.values("OtherInfo").collect();
    let entities = snapshot.entities();
    assert!(entities.len() > 20);
    for entity in &entities {
        if gpu_info::is_accelerator(entity.class) {
            let key = format!("GPU.{}.ID={}", gpu_info::local_key(&entity.id), entity.id);
            assert!(
                other_info.contains(&key.as_str()),
                "{:?} {} is not in any OtherInfo",
                entity.class,
                entity.id
            );
        } else {
            let count = ids.iter().filter(|id| **id == entity.id).count();
            assert_eq!(
                count, 1,
                "{:?} {} appears {count} times as an ID",
                entity.class, entity.id
            );
        }
    }
}

#[test]
fn gpu_facts_survive_as_other_info() {
    let parsed = render(&sample::snapshot("SAMPLE-SITE"));
    let other_info: Vec<&str> = parsed.values("OtherInfo").collect();
    for expected in [
        "GPU.gpu.Model=NVIDIA A100-SXM4-80GB",
        "GPU.gpu.Vendor=NVIDIA",
        "GPU.gpu.Memory=81920",
        "GPU.gpu.ComputeCapability=8.0",
        "GPU.gpu.TotalAcceleratorSlots=16",
        "GPU.gpu.UsedAcceleratorSlots=6",
        "GPU.gpu.FreeAcceleratorSlots=6",
        "GPU.mig-3g.40gb.VirtualizationType=mig",
        "GPU.mig-3g.40gb.MIGProfile=3g.40gb",
        "GPU.a100-passthrough.FreeAccelerators=5",
        "GPU.g1.a100x2.Number=2",
        "GPU.g1.a100x2.VirtualizationType=passthrough",
        "GPU.gpu%2Fa100.MaxAcceleratorSlotsPerJob=8",
    ] {
        assert!(other_info.contains(&expected), "{expected} missing");
    }
}

#[test]
fn fractional_counts_keep_their_fraction() {
    let mut snapshot = sample::snapshot("SAMPLE-SITE");
    for service in &mut snapshot.services {
        if let accelfed_schemas::glue::Service::Cloud(cloud) = service {
            let accelerator = cloud.instance_types[0]
                .accelerator
                .as_mut()
                .expect("the sample flavor has a GPU");
            accelerator.count = accelfed_schemas::gpu::GpuCount::new(0.5).expect("valid");
        }
    }
    let parsed = render(&snapshot);
    assert!(
        parsed
            .values("OtherInfo")
            .any(|v| v == "GPU.g1.a100x2.Number=0.5")
    );
}

#[test]
fn names_with_markup_characters_and_non_ascii_round_trip() {
    let site = "Ünï <&\"'> Śite";
    let bytes = xml::render(&sample::snapshot(site));
    let text = String::from_utf8(bytes.clone()).expect("UTF-8");
    assert!(
        text.contains("Ünï &lt;&amp;&quot;&apos;&gt; Śite"),
        "escaped"
    );
    let parsed = parse(&bytes);
    assert!(parsed.values("ID").any(|id| id == site));
    assert!(parsed.values("Name").any(|name| name == site));
}

#[test]
fn rendering_is_deterministic() {
    let snapshot = sample::snapshot("SAMPLE-SITE");
    assert_eq!(xml::render(&snapshot), xml::render(&snapshot));
}

#[test]
fn golden_sample() {
    let bytes = xml::render(&sample::snapshot("SAMPLE-SITE"));
    common::assert_golden("sample.glue20.xml", &bytes);
}
