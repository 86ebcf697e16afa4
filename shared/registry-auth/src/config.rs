//! `AuthConfig`: where users and token keys come from, by the names of the variables that set them
//! (`registry-settings` reads them, as flags or environment variables, and passes them to [`AuthConfig::from_lookup`]).
//!
//! | variable | meaning |
//! |---|---|
//! | `REGISTRY_USERS_FILE` | path of the users file (local runs); unset with the others below = auth off |
//! | `REGISTRY_USERS` | the users file content itself (e.g. injected into a Lambda from a secret) |
//! | `REGISTRY_USERS_SECRET` | name/ARN of a Secrets Manager secret holding the users file; the host fetches it |
//! | `REGISTRY_JWT_ISSUER`, `REGISTRY_JWT_AUDIENCE` | bearer tokens: required `iss` and `aud` |
//! | `REGISTRY_JWKS_FILE` / `REGISTRY_JWKS` / `REGISTRY_JWKS_SECRET` | the issuer's JWKS document: a path, the text itself, or a Secrets Manager secret the host fetches (never the issuer's URL) |
//! | `REGISTRY_JWT_ROLE_CLAIM` | claim holding `registry:<role>` values (default `scope`) |
//!
//! Auth is on as soon as a users source or a JWT issuer is configured; the three users sources are
//! mutually exclusive, and the JWT settings are all-or-nothing.

use crate::error::AuthError;
use crate::jwt::DEFAULT_ROLE_CLAIM;
use std::path::PathBuf;

/// Where the users file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsersSource {
    /// `REGISTRY_USERS_FILE`: read from local disk at start-up.
    File(PathBuf),
    /// `REGISTRY_USERS`: the content itself.
    Inline(String),
    /// `REGISTRY_USERS_SECRET`: a Secrets Manager secret the host process fetches and passes to
    /// [`crate::Authenticator::from_config`]; this crate does no network I/O.
    Secret(String),
}

/// Where the JWKS document comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// `REGISTRY_JWKS_FILE`.
    File(PathBuf),
    /// `REGISTRY_JWKS`.
    Inline(String),
    /// `REGISTRY_JWKS_SECRET`: a Secrets Manager secret the host fetches and puts in place as
    /// [`JwksSource::Inline`] (a Lambda environment holds 4 KB in all, less than a JWKS of a few keys).
    Secret(String),
}

/// Bearer-token settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtConfig {
    /// Required `iss`.
    pub issuer: String,
    /// Required member of `aud`.
    pub audience: String,
    /// The verification keys.
    pub jwks: JwksSource,
    /// The claim mapped to roles and scopes.
    pub role_claim: String,
}

/// The auth settings. `users: None, jwt: None` means auth is off (every request is let in).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthConfig {
    /// Basic-auth users, if configured.
    pub users: Option<UsersSource>,
    /// Bearer tokens, if configured.
    pub jwt: Option<JwtConfig>,
}

impl AuthConfig {
    /// Reads the settings through `lookup` by variable name (`None` = unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, AuthError> {
        let users = one_source(&lookup, "REGISTRY_USERS", UsersSource::File, UsersSource::Inline, UsersSource::Secret)?;
        let issuer = lookup("REGISTRY_JWT_ISSUER");
        let audience = lookup("REGISTRY_JWT_AUDIENCE");
        let jwks = one_source(&lookup, "REGISTRY_JWKS", JwksSource::File, JwksSource::Inline, JwksSource::Secret)?;
        let jwt = match (issuer, audience, jwks) {
            (None, None, None) => None,
            (Some(issuer), Some(audience), Some(jwks)) => Some(JwtConfig {
                issuer,
                audience,
                jwks,
                role_claim: lookup("REGISTRY_JWT_ROLE_CLAIM").unwrap_or_else(|| DEFAULT_ROLE_CLAIM.to_string()),
            }),
            _ => {
                return Err(AuthError::Config(
                    "bearer tokens need REGISTRY_JWT_ISSUER, REGISTRY_JWT_AUDIENCE and REGISTRY_JWKS_FILE (or REGISTRY_JWKS, REGISTRY_JWKS_SECRET)"
                        .into(),
                ));
            }
        };
        Ok(AuthConfig { users, jwt })
    }

    /// Whether requests must authenticate.
    pub fn is_enabled(&self) -> bool {
        self.users.is_some() || self.jwt.is_some()
    }
}

/// The one source of `<name>_FILE` (a path), `<name>` (the content itself) and `<name>_SECRET` (a
/// Secrets Manager secret) that is set, if any; more than one is a configuration error.
fn one_source<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    file: impl FnOnce(PathBuf) -> T,
    inline: impl FnOnce(String) -> T,
    secret: impl FnOnce(String) -> T,
) -> Result<Option<T>, AuthError> {
    let (file_name, secret_name) = (format!("{name}_FILE"), format!("{name}_SECRET"));
    let sources = [
        lookup(&file_name).map(|path| file(PathBuf::from(path))),
        lookup(name).map(inline),
        lookup(&secret_name).map(secret),
    ];
    let mut configured = sources.into_iter().flatten();
    let first = configured.next();
    if configured.next().is_some() {
        return Err(AuthError::Config(format!("set only one of {file_name}, {name} and {secret_name}")));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<AuthConfig, AuthError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        AuthConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_means_auth_off() {
        let config = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!config.is_enabled());
        assert_eq!(config, AuthConfig::default());
    }

    #[test]
    fn each_users_source_turns_auth_on() {
        for (name, expected) in [
            ("REGISTRY_USERS_FILE", UsersSource::File("/etc/u".into())),
            ("REGISTRY_USERS", UsersSource::Inline("/etc/u".into())),
            ("REGISTRY_USERS_SECRET", UsersSource::Secret("/etc/u".into())),
        ] {
            let config = config(&[(name, "/etc/u")]).unwrap_or_else(|e| panic!("{e}"));
            assert!(config.is_enabled());
            assert_eq!(config.users, Some(expected));
        }
        assert!(config(&[("REGISTRY_USERS_FILE", "a"), ("REGISTRY_USERS_SECRET", "b")]).is_err());
    }

    #[test]
    fn jwt_settings_are_all_or_nothing() {
        let full =
            [("REGISTRY_JWT_ISSUER", "https://idp"), ("REGISTRY_JWT_AUDIENCE", "sr"), ("REGISTRY_JWKS_FILE", "k")];
        let jwt = config(&full).unwrap_or_else(|e| panic!("{e}")).jwt;
        assert_eq!(jwt.as_ref().map(|jwt| jwt.role_claim.as_str()), Some("scope"));
        assert_eq!(jwt.map(|jwt| jwt.jwks), Some(JwksSource::File("k".into())));
        for missing in 0..full.len() {
            let partial: Vec<_> = full.iter().enumerate().filter(|(i, _)| *i != missing).map(|(_, v)| *v).collect();
            assert!(config(&partial).is_err(), "missing {:?}", full[missing]);
        }
        let claim = [full[0], full[1], ("REGISTRY_JWKS", "{}"), ("REGISTRY_JWT_ROLE_CLAIM", "roles")];
        let jwt = config(&claim).unwrap_or_else(|e| panic!("{e}")).jwt;
        assert_eq!(jwt.map(|jwt| (jwt.role_claim, jwt.jwks)), Some(("roles".into(), JwksSource::Inline("{}".into()))));
    }

    #[test]
    fn jwks_comes_from_exactly_one_source() {
        let secret = [
            ("REGISTRY_JWT_ISSUER", "https://idp"),
            ("REGISTRY_JWT_AUDIENCE", "sr"),
            ("REGISTRY_JWKS_SECRET", "arn:s"),
        ];
        let jwt = config(&secret).unwrap_or_else(|e| panic!("{e}")).jwt;
        assert_eq!(jwt.map(|jwt| jwt.jwks), Some(JwksSource::Secret("arn:s".into())));
        assert!(config(&[secret[0], secret[1], secret[2], ("REGISTRY_JWKS", "{}")]).is_err());
        assert!(config(&[secret[0], secret[1], secret[2], ("REGISTRY_JWKS_FILE", "k")]).is_err());
    }
}
