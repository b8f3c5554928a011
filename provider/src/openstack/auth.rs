//! Credentials as OpenStack's own tools find them: a `clouds.yaml` entry (named in the config, or
//! by `OS_CLOUD`) merged with `secure.yaml` beside it, else the `OS_*` environment variables.
//! Pure: file contents and the environment come in as arguments, so every rule is tested without
//! touching the machine. Secrets are [`Secret`]s, whose `Debug` never shows them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

/// A password or application-credential secret; printed as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The secret itself, for the one request body that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// How to get a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Password {
        username: String,
        user_domain: String,
        password: Secret,
        project: String,
        /// True when `project` is an id rather than a name.
        project_is_id: bool,
        project_domain: String,
    },
    ApplicationCredential {
        id: String,
        secret: Secret,
    },
}

/// Everything needed to talk to one cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Keystone, ending in `/v3`.
    pub auth_url: String,
    pub method: Method,
    pub region: Option<String>,
    pub interface: String,
    pub ca_file: Option<PathBuf>,
    /// Where they came from, for messages (`clouds.yaml entry "site"`, `OS_* variables`).
    pub origin: String,
}

/// Where `clouds.yaml` is looked for, in os-client-config's order.
pub fn search_path(home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from("clouds.yaml")];
    if let Some(home) = home {
        paths.push(home.join(".config/openstack/clouds.yaml"));
    }
    paths.push(PathBuf::from("/etc/openstack/clouds.yaml"));
    paths
}

fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Mapping(base), Value::Mapping(over)) => {
            for (key, value) in over {
                match base.get_mut(key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

fn string(value: &Value, key: &str) -> Option<String> {
    match value.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Credentials from a `clouds.yaml` text (and its `secure.yaml`, if any) for cloud `name`.
pub fn from_clouds_yaml(
    clouds: &str,
    secure: Option<&str>,
    name: &str,
    file: &Path,
) -> Result<Credentials, String> {
    let parse = |text: &str, what: &str| {
        serde_yaml_ng::from_str::<Value>(text).map_err(|err| format!("{what}: {err}"))
    };
    let mut doc = parse(clouds, &file.display().to_string())?;
    if let Some(secure) = secure {
        merge(&mut doc, &parse(secure, "secure.yaml")?);
    }
    let cloud = doc
        .get("clouds")
        .and_then(|clouds| clouds.get(name))
        .ok_or_else(|| format!("{}: no cloud named {name:?}", file.display()))?;
    let empty = Value::Mapping(Default::default());
    let auth = cloud.get("auth").unwrap_or(&empty);
    let get = |key: &str| string(auth, key);
    let auth_type = string(cloud, "auth_type").unwrap_or_else(|| "password".to_owned());
    let origin = format!("clouds.yaml entry {name:?} ({})", file.display());
    let method = method(&auth_type, &get, &origin)?;
    let auth_url = get("auth_url").ok_or_else(|| format!("{origin}: auth.auth_url is missing"))?;
    Ok(Credentials {
        auth_url: v3(&auth_url),
        method,
        region: string(cloud, "region_name"),
        interface: string(cloud, "interface").unwrap_or_else(|| "public".to_owned()),
        ca_file: string(cloud, "cacert").map(PathBuf::from),
        origin,
    })
}

/// Credentials from `OS_*` variables (`env` is the environment as a map).
pub fn from_env(env: &BTreeMap<String, String>) -> Result<Credentials, String> {
    let get = |key: &str| {
        env.get(&format!("OS_{}", key.to_ascii_uppercase()))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let origin = "OS_* environment variables".to_owned();
    let auth_type = get("auth_type").unwrap_or_else(|| "password".to_owned());
    let method = method(&auth_type, &get, &origin)?;
    let auth_url = get("auth_url").ok_or_else(|| format!("{origin}: OS_AUTH_URL is not set"))?;
    Ok(Credentials {
        auth_url: v3(&auth_url),
        method,
        region: get("region_name"),
        interface: get("interface").unwrap_or_else(|| "public".to_owned()),
        ca_file: get("cacert").map(PathBuf::from),
        origin,
    })
}

fn method(
    auth_type: &str,
    get: &dyn Fn(&str) -> Option<String>,
    origin: &str,
) -> Result<Method, String> {
    let need = |key: &str| get(key).ok_or_else(|| format!("{origin}: {key} is missing"));
    match auth_type.replace('-', "_").as_str() {
        "password" | "v3password" => {
            let (project, project_is_id) = match (get("project_id"), get("project_name")) {
                (Some(id), _) => (id, true),
                (None, Some(name)) => (name, false),
                (None, None) => {
                    return Err(format!("{origin}: project_name or project_id is missing"));
                }
            };
            let domain = get("domain_name").unwrap_or_else(|| "Default".to_owned());
            Ok(Method::Password {
                username: need("username")?,
                user_domain: get("user_domain_name").unwrap_or_else(|| domain.clone()),
                password: Secret::new(need("password")?),
                project,
                project_is_id,
                project_domain: get("project_domain_name").unwrap_or(domain),
            })
        }
        "v3applicationcredential" | "application_credential" => Ok(Method::ApplicationCredential {
            id: need("application_credential_id")?,
            secret: Secret::new(need("application_credential_secret")?),
        }),
        other => Err(format!(
            "{origin}: auth_type {other:?} is not supported (password, v3applicationcredential)"
        )),
    }
}

/// `https://keystone:5000` and `.../v3/` both become `.../v3`.
fn v3(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    if trimmed.ends_with("/v3") {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/v3")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOUDS: &str = r#"
clouds:
  site:
    region_name: RegionTwo
    interface: internal
    cacert: /etc/ssl/site-ca.pem
    auth:
      auth_url: https://keystone.example.org:5000
      username: accelfed
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
  appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://keystone.example.org:5000/v3/
      application_credential_id: 4a1b
"#;
    const SECURE: &str = "clouds:\n  site:\n    auth:\n      password: s3cret\n  appcred:\n    auth:\n      application_credential_secret: xyz\n";

    #[test]
    fn clouds_yaml_with_secure_yaml_gives_password_credentials() {
        let creds =
            from_clouds_yaml(CLOUDS, Some(SECURE), "site", Path::new("clouds.yaml")).unwrap();
        assert_eq!(creds.auth_url, "https://keystone.example.org:5000/v3");
        assert_eq!(creds.region.as_deref(), Some("RegionTwo"));
        assert_eq!(creds.interface, "internal");
        assert_eq!(creds.ca_file, Some(PathBuf::from("/etc/ssl/site-ca.pem")));
        let Method::Password {
            password,
            project,
            project_is_id,
            ..
        } = &creds.method
        else {
            panic!("{creds:?}")
        };
        assert_eq!(password.expose(), "s3cret");
        assert_eq!((project.as_str(), *project_is_id), ("admin", false));
        assert!(!format!("{creds:?}").contains("s3cret"));
    }

    #[test]
    fn application_credentials_and_missing_pieces() {
        let creds =
            from_clouds_yaml(CLOUDS, Some(SECURE), "appcred", Path::new("clouds.yaml")).unwrap();
        assert!(
            matches!(creds.method, Method::ApplicationCredential { ref id, .. } if id == "4a1b")
        );
        assert!(!format!("{creds:?}").contains("xyz"));
        let err = from_clouds_yaml(CLOUDS, None, "site", Path::new("c.yaml")).unwrap_err();
        assert!(err.contains("password is missing"), "{err}");
        let err = from_clouds_yaml(CLOUDS, None, "nope", Path::new("c.yaml")).unwrap_err();
        assert!(err.contains("no cloud named \"nope\""), "{err}");
    }

    #[test]
    fn os_variables() {
        let env: BTreeMap<String, String> = [
            ("OS_AUTH_URL", "http://127.0.0.1:5000/v3"),
            ("OS_USERNAME", "admin"),
            ("OS_PASSWORD", "pw"),
            ("OS_PROJECT_ID", "abc"),
            ("OS_REGION_NAME", "RegionOne"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let creds = from_env(&env).unwrap();
        assert_eq!(creds.region.as_deref(), Some("RegionOne"));
        assert!(matches!(
            creds.method,
            Method::Password {
                project_is_id: true,
                ..
            }
        ));
        assert!(from_env(&BTreeMap::new()).unwrap_err().contains("missing"));
    }
}
