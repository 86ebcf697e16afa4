//! The function's authenticator: `registry-auth`'s configuration, with the users file fetched from
//! Secrets Manager at init when `REGISTRY_USERS_SECRET` names a secret.

use registry_auth::{AuthConfig, Authenticator, UsersSource};
use std::sync::Arc;

/// Reads `AuthConfig::from_env()`; for `REGISTRY_USERS_SECRET` fetches the secret's string value (one
/// `GetSecretValue` at init). `None` = auth off. A secret without a value, or any fetch failure, is an
/// error: init fails and the function never serves without its users.
pub async fn authenticator() -> Result<Option<Arc<Authenticator>>, lambda_http::Error> {
    let config = AuthConfig::from_env()?;
    let fetched = match &config.users {
        Some(UsersSource::Secret(secret_id)) => {
            let aws = aws_config::load_from_env().await;
            let client = aws_sdk_secretsmanager::Client::new(&aws);
            let output = client.get_secret_value().secret_id(secret_id).send().await.map_err(|error| {
                format!("users secret {secret_id}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(error))
            })?;
            let text = output.secret_string().ok_or_else(|| format!("users secret {secret_id} has no string value"))?;
            Some(text.to_string())
        }
        _ => None,
    };
    let authenticator = Authenticator::from_config(&config, fetched.as_deref())?;
    Ok(authenticator.map(Arc::new))
}
