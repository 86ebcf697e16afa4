//! The function's authenticator: `registry-auth`'s configuration, with the users file and the JWKS
//! read from Secrets Manager when `REGISTRY_USERS_SECRET` / `REGISTRY_JWKS_SECRET` name secrets (the
//! Terraform module uses both: a Lambda environment holds 4 KB in all): at init, and again on the
//! `REGISTRY_AUTH_RELOAD_SECONDS` schedule while the instance lives, so a removed user or a rotated key
//! reaches warm instances too (`registry_auth::reload`).

use registry_auth::reload::ReadFuture;
use registry_auth::{AuthError, Authenticator, SecretReader};
use registry_settings::AuthArgs;
use std::sync::Arc;

/// The auth configuration of `args`, its secrets read (one `GetSecretValue` each, at init and then at
/// most once per reload interval, plus rate-limited reads after a miss). `None` = auth off. A secret
/// without a value, or any failure at init, is an error: init fails and the function never serves
/// without its users or keys. `REGISTRY_AUTH_REVISION`, when set, is logged: the Terraform module sets
/// it from the JWKS it wrote, so a JWKS change replaces every instance at once.
pub async fn authenticator(args: &AuthArgs) -> Result<Option<Arc<Authenticator>>, lambda_http::Error> {
    let config = args.config()?;
    let uses_secrets = matches!(config.users, Some(registry_auth::UsersSource::Secret(_)))
        || matches!(config.jwt.as_ref().map(|jwt| &jwt.jwks), Some(registry_auth::JwksSource::Secret(_)));
    let secrets: Option<Arc<dyn SecretReader>> =
        if uses_secrets { Some(Arc::new(SecretsManager::from_env().await)) } else { None };
    if let Some(revision) = &args.auth_revision {
        tracing::info!(%revision, "auth configuration revision");
    }
    let authenticator = Authenticator::load(&config, secrets, args.reload_policy()).await?;
    Ok(authenticator.map(Arc::new))
}

/// Secrets Manager as the authenticator's [`SecretReader`].
#[derive(Debug)]
pub struct SecretsManager {
    client: aws_sdk_secretsmanager::Client,
}

impl SecretsManager {
    /// A client from the standard AWS variables.
    pub async fn from_env() -> SecretsManager {
        SecretsManager { client: aws_sdk_secretsmanager::Client::new(&aws_config::load_from_env().await) }
    }
}

/// The origin-header guard when `origin_secret` names its secret ([`crate::auth_origin`]), read now
/// and then on the auth reload schedule. `None` when unset.
pub async fn origin_guard(
    origin_secret: Option<&str>,
    args: &AuthArgs,
) -> Result<Option<Arc<crate::auth_origin::OriginGuard>>, lambda_http::Error> {
    let Some(secret_id) = origin_secret.filter(|id| !id.trim().is_empty()) else { return Ok(None) };
    let reader: Arc<dyn SecretReader> = Arc::new(SecretsManager::from_env().await);
    let guard = crate::auth_origin::OriginGuard::load(secret_id, reader, args.reload_policy()).await?;
    Ok(Some(Arc::new(guard)))
}

impl SecretReader for SecretsManager {
    fn read_secret<'a>(&'a self, secret_id: &'a str) -> ReadFuture<'a, String> {
        Box::pin(async move {
            let output = self.client.get_secret_value().secret_id(secret_id).send().await.map_err(|error| {
                AuthError::Config(format!(
                    "secret {secret_id}: {}",
                    aws_sdk_secretsmanager::error::DisplayErrorContext(error)
                ))
            })?;
            let text = output
                .secret_string()
                .ok_or_else(|| AuthError::Config(format!("secret {secret_id} has no string value")))?;
            Ok(text.to_string())
        })
    }
}
