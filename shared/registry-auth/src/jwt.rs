//! Bearer tokens: OAuth/OIDC JWTs checked against a configured issuer, audience and JWKS (no network
//! fetch), mapped to a role and subject scope by a claim.
//!
//! Accepted tokens: signed with an asymmetric algorithm (RS*, PS*, ES256/384, EdDSA; never HS*) by a key of the
//! JWKS (chosen by `kid`, or the only key when the JWKS has one), `iss` equal to the issuer, `aud` containing
//! the audience, `exp` present and in the future (60 s leeway), `nbf` honoured when present.
//!
//! Role mapping: the role claim (default `scope`) is a space-separated string or an array of strings. The
//! values `registry:read`, `registry:write` and `registry:admin` grant that role (the highest wins);
//! `registry:prefix:<P>` limits the token to subjects starting with `<P>` (several may be given). A valid
//! token without a role value is authenticated but denied every operation.

use crate::access::{Principal, Role, Scope};
use crate::error::AuthError;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

/// The claim read for roles when none is configured.
pub const DEFAULT_ROLE_CLAIM: &str = "scope";

const ROLE_VALUE_PREFIX: &str = "registry:";
const SCOPE_VALUE_PREFIX: &str = "registry:prefix:";

/// Why a token was refused. Only for logs at debug level: every variant answers the same 401.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRejection {
    /// Not a JWT, or its header does not parse.
    Malformed,
    /// An HMAC algorithm, or one that does not match the key.
    Algorithm,
    /// No JWKS key for the token's `kid`.
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// `exp` missing or in the past, or `nbf` in the future.
    Expired,
    /// `iss` is not the configured issuer.
    Issuer,
    /// `aud` does not contain the configured audience.
    Audience,
    /// Any other validation failure.
    Invalid,
}

/// Validates bearer tokens. Built once at start-up from configuration.
#[derive(Debug, Clone)]
pub struct JwtValidator {
    issuer: String,
    audience: String,
    role_claim: String,
    keys: Vec<(Option<String>, Option<String>, DecodingKey)>,
}

impl JwtValidator {
    /// Builds a validator from the JWKS document text. Symmetric (`oct`) keys are refused, so a token
    /// can never be verified with a shared secret; a JWKS with no usable key is an error.
    pub fn new(issuer: &str, audience: &str, jwks_json: &str, role_claim: &str) -> Result<Self, AuthError> {
        let set: JwkSet = serde_json::from_str(jwks_json).map_err(|error| AuthError::Jwks(error.to_string()))?;
        let mut keys = Vec::new();
        for jwk in &set.keys {
            let key = DecodingKey::from_jwk(jwk).map_err(|error| AuthError::Jwks(error.to_string()))?;
            if key.family() == AlgorithmFamily::Hmac {
                return Err(AuthError::Jwks("symmetric (oct) keys are not accepted".into()));
            }
            let algorithm = jwk.common.key_algorithm.map(|algorithm| algorithm.to_string());
            keys.push((jwk.common.key_id.clone(), algorithm, key));
        }
        if keys.is_empty() {
            return Err(AuthError::Jwks("the JWKS has no keys".into()));
        }
        if issuer.is_empty() || audience.is_empty() {
            return Err(AuthError::Jwks("issuer and audience must be set".into()));
        }
        Ok(JwtValidator {
            issuer: issuer.to_string(),
            audience: audience.to_string(),
            role_claim: role_claim.to_string(),
            keys,
        })
    }

    /// A validator with the same issuer, audience and role claim over another JWKS document (a
    /// reloaded one).
    pub fn with_jwks(&self, jwks_json: &str) -> Result<Self, AuthError> {
        JwtValidator::new(&self.issuer, &self.audience, jwks_json, &self.role_claim)
    }

    /// Validates `token` (the text after `Bearer `) and maps it to a principal named by its `sub` claim.
    pub fn validate(&self, token: &str) -> Result<Principal, TokenRejection> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenRejection::Malformed)?;
        if header.alg.family() == AlgorithmFamily::Hmac {
            return Err(TokenRejection::Algorithm);
        }
        let (_, key_algorithm, key) = match &header.kid {
            Some(kid) => self.keys.iter().find(|(id, _, _)| id.as_deref() == Some(kid.as_str())),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
        .ok_or(TokenRejection::UnknownKey)?;
        if key.family() != header.alg.family()
            || key_algorithm.as_ref().is_some_and(|algorithm| *algorithm != algorithm_name(header.alg))
        {
            return Err(TokenRejection::Algorithm);
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).map_err(|error| {
            use jsonwebtoken::errors::ErrorKind;
            match error.kind() {
                ErrorKind::InvalidSignature => TokenRejection::Signature,
                ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => TokenRejection::Expired,
                ErrorKind::MissingRequiredClaim(claim) if claim == "exp" => TokenRejection::Expired,
                ErrorKind::InvalidIssuer => TokenRejection::Issuer,
                ErrorKind::InvalidAudience => TokenRejection::Audience,
                ErrorKind::MissingRequiredClaim(claim) if claim == "iss" => TokenRejection::Issuer,
                ErrorKind::MissingRequiredClaim(claim) if claim == "aud" => TokenRejection::Audience,
                ErrorKind::InvalidAlgorithm => TokenRejection::Algorithm,
                ErrorKind::InvalidToken | ErrorKind::Base64(_) | ErrorKind::Json(_) | ErrorKind::Utf8(_) => {
                    TokenRejection::Malformed
                }
                _ => TokenRejection::Invalid,
            }
        })?;
        Ok(self.principal(&data.claims))
    }

    fn principal(&self, claims: &Map<String, Value>) -> Principal {
        let values: Vec<&str> = match claims.get(&self.role_claim) {
            Some(Value::String(text)) => text.split_whitespace().collect(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut role = None;
        let mut prefixes = Vec::new();
        for value in values {
            if let Some(prefix) = value.strip_prefix(SCOPE_VALUE_PREFIX) {
                if !prefix.is_empty() {
                    prefixes.push(prefix.to_string());
                }
            } else if let Some(Ok(granted)) = value.strip_prefix(ROLE_VALUE_PREFIX).map(str::parse::<Role>) {
                role = role.max(Some(granted));
            }
        }
        let name = claims.get("sub").and_then(Value::as_str).unwrap_or("bearer").to_string();
        Principal { name, role, scope: Scope::from_prefixes(prefixes) }
    }
}

fn algorithm_name(algorithm: Algorithm) -> String {
    format!("{algorithm:?}")
}
