//! Which VO a project serves: the configuration's map (by project id, then name) wins, else the
//! project property (`VO` by default, as cASO reads it). Projects with neither serve no VO and
//! are neither published as shares nor accounted to a VO.

use std::collections::BTreeMap;

use accelfed_schemas::names::VoName;

use super::api::Project;

/// The VO of `project`, or a message naming the project when its property is not a usable name.
pub fn project_vo(
    project: &Project,
    property: &str,
    map: &BTreeMap<String, VoName>,
) -> Result<Option<VoName>, String> {
    if let Some(vo) = map.get(&project.id).or_else(|| map.get(&project.name)) {
        return Ok(Some(vo.clone()));
    }
    match project.extra.get(property) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(value)) => {
            VoName::new(value.trim()).map(Some).map_err(|err| {
                format!(
                    "project {:?} ({}): property {property}: {err}",
                    project.name, project.id
                )
            })
        }
        Some(other) => Err(format!(
            "project {:?} ({}): property {property} is {other}, not a VO name",
            project.name, project.id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(json: &str) -> Project {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn property_then_map_by_id_or_name() {
        let atlas = project(r#"{"id": "390d", "name": "vo-atlas", "VO": "atlas"}"#);
        let none = BTreeMap::new();
        assert_eq!(
            project_vo(&atlas, "VO", &none).unwrap().unwrap().as_str(),
            "atlas"
        );
        let map: BTreeMap<String, VoName> =
            [("vo-atlas".to_owned(), VoName::new("atlas.cern.ch").unwrap())].into();
        assert_eq!(
            project_vo(&atlas, "VO", &map).unwrap().unwrap().as_str(),
            "atlas.cern.ch"
        );
        let plain = project(r#"{"id": "d4c2", "name": "vo-cms"}"#);
        assert_eq!(project_vo(&plain, "VO", &none).unwrap(), None);
    }

    #[test]
    fn real_projects_without_the_property_map_by_name() {
        #[derive(serde::Deserialize)]
        struct Projects {
            projects: Vec<Project>,
        }
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/openstack/keystone-projects.json"
        ))
        .unwrap();
        let projects: Projects = serde_json::from_str(&text).unwrap();
        let map: BTreeMap<String, VoName> = [
            ("vo-atlas".to_owned(), VoName::new("atlas").unwrap()),
            (
                "d4c2c49480524bd1b0c937dd2cd459d0".to_owned(),
                VoName::new("cms").unwrap(),
            ),
        ]
        .into();
        let vos: Vec<_> = projects
            .projects
            .iter()
            .filter_map(|p| {
                project_vo(p, "VO", &map)
                    .unwrap()
                    .map(|vo| (p.name.clone(), vo.to_string()))
            })
            .collect();
        assert_eq!(
            vos,
            [
                ("vo-atlas".to_owned(), "atlas".to_owned()),
                ("vo-cms".to_owned(), "cms".to_owned())
            ]
        );
    }

    #[test]
    fn unusable_properties_are_named() {
        let bad = project(r#"{"id": "p1", "name": "weird", "VO": 42}"#);
        let err = project_vo(&bad, "VO", &BTreeMap::new()).unwrap_err();
        assert!(err.contains("\"weird\" (p1)"), "{err}");
        let empty = project(r#"{"id": "p2", "name": "blank", "VO": " "}"#);
        assert!(project_vo(&empty, "VO", &BTreeMap::new()).is_err());
    }
}
