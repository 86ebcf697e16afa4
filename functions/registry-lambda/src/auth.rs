//! The function's authenticator: `registry-auth`'s configuration, with the users file and the JWKS
//! fetched from Secrets Manager at init when `REGISTRY_USERS_SECRET` / `REGISTRY_JWKS_SECRET` name
//! secrets (the Terraform module uses both: a Lambda environment holds 4 KB in all).

use registry_auth::{Authenticator, JwksSource, UsersSource};
use registry_settings::AuthArgs;
use std::sync::Arc;

/// The auth configuration of `args`, with the secrets it names fetched (one `GetSecretValue` each, at
/// init). `None` = auth off. A secret without a value, or any fetch failure, is an error: init fails
/// and the function never serves without its users or keys.
pub async fn authenticator(args: &AuthArgs) -> Result<Option<Arc<Authenticator>>, lambda_http::Error> {
    let mut config = args.config()?;
    let users_secret = match &config.users {
        Some(UsersSource::Secret(secret_id)) => Some(secret_id.clone()),
        _ => None,
    };
    let jwks_secret = match config.jwt.as_ref().map(|jwt| &jwt.jwks) {
        Some(JwksSource::Secret(secret_id)) => Some(secret_id.clone()),
        _ => None,
    };
    let mut fetched_users = None;
    if users_secret.is_some() || jwks_secret.is_some() {
        let aws = aws_config::load_from_env().await;
        let client = aws_sdk_secretsmanager::Client::new(&aws);
        if let Some(secret_id) = users_secret {
            fetched_users = Some(secret_string(&client, "users", &secret_id).await?);
        }
        if let (Some(secret_id), Some(jwt)) = (jwks_secret, config.jwt.as_mut()) {
            jwt.jwks = JwksSource::Inline(secret_string(&client, "JWKS", &secret_id).await?);
        }
    }
    let authenticator = Authenticator::from_config(&config, fetched_users.as_deref())?;
    Ok(authenticator.map(Arc::new))
}

/// The string value of secret `secret_id` (`what` names it in errors).
async fn secret_string(
    client: &aws_sdk_secretsmanager::Client,
    what: &str,
    secret_id: &str,
) -> Result<String, lambda_http::Error> {
    let output = client.get_secret_value().secret_id(secret_id).send().await.map_err(|error| {
        format!("{what} secret {secret_id}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(error))
    })?;
    let text = output.secret_string().ok_or_else(|| format!("{what} secret {secret_id} has no string value"))?;
    Ok(text.to_string())
}
