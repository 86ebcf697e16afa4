//! Bearer-token validation: keys generated per test, JWKS built from them, every rejection class.

mod support;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use registry_auth::{JwtValidator, Role, Scope, TokenRejection};
use serde_json::{Value, json};
use support::{Key, jwks, now};

const ISSUER: &str = "https://idp.example.com/realms/kafka";
const AUDIENCE: &str = "schema-registry";

fn claims(scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "svc-orders", "exp": now() + 600, "iat": now(), "scope": scope})
}

fn validator(keys: &[&Key]) -> JwtValidator {
    JwtValidator::new(ISSUER, AUDIENCE, &jwks(keys), "scope").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_valid_token_maps_scope_values_to_role_and_prefixes() {
    let key = Key::ec("k1");
    let principal = validator(&[&key])
        .validate(&key.sign(&claims("openid registry:read registry:write registry:prefix:team-a.")))
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(principal.name, "svc-orders");
    assert_eq!(principal.role, Some(Role::Write));
    assert_eq!(principal.scope, Scope::Prefixes(vec!["team-a.".into()]));
}

#[test]
fn eddsa_keys_and_array_claims_work_and_kid_selects_the_key() {
    let (ec, ed) = (Key::ec("ec"), Key::ed("ed"));
    let validator = JwtValidator::new(ISSUER, AUDIENCE, &jwks(&[&ec, &ed]), "roles").unwrap_or_else(|e| panic!("{e}"));
    let mut token_claims = claims("");
    token_claims["roles"] = json!(["registry:admin"]);
    for key in [&ec, &ed] {
        let principal = validator.validate(&key.sign(&token_claims)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((principal.role, principal.scope), (Some(Role::Admin), Scope::All));
    }
}

#[test]
fn a_token_without_registry_values_has_no_role() {
    let key = Key::ec("k1");
    let principal =
        validator(&[&key]).validate(&key.sign(&claims("openid profile"))).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(principal.role, None);
}

#[test]
fn rejections() {
    let key = Key::ec("k1");
    let validator = validator(&[&key]);
    let with = |field: &str, value: Value| {
        let mut claims = claims("registry:admin");
        claims[field] = value;
        key.sign(&claims)
    };
    let mut no_exp = claims("registry:admin");
    no_exp.as_object_mut().map(|claims| claims.remove("exp"));
    let impostor = Key::ec("k1");
    let unknown = Key::ec("k2");
    let valid = key.sign(&claims("registry:admin"));
    let mut parts: Vec<String> = valid.split('.').map(str::to_string).collect();
    parts[1] = jsonwebtoken::crypto::sign(b"x", &key.encoding, Algorithm::ES256).unwrap_or_default();
    let tampered = parts.join(".");
    let hmac = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(
            &header,
            &claims("registry:admin"),
            &EncodingKey::from_secret(b"secret").unwrap_or_else(|e| panic!("{e}")),
        )
        .unwrap_or_default()
    };
    let cases = [
        (with("exp", json!(now() - 3600)), TokenRejection::Expired),
        (key.sign(&no_exp), TokenRejection::Expired),
        (with("nbf", json!(now() + 3600)), TokenRejection::Expired),
        (with("iss", json!("https://evil.example.com")), TokenRejection::Issuer),
        (with("aud", json!("another-service")), TokenRejection::Audience),
        (with("aud", json!(["x", "y"])), TokenRejection::Audience),
        (impostor.sign(&claims("registry:admin")), TokenRejection::Signature),
        (tampered, TokenRejection::Signature),
        (unknown.sign(&claims("registry:admin")), TokenRejection::UnknownKey),
        (hmac, TokenRejection::Algorithm),
        ("not-a-jwt".to_string(), TokenRejection::Malformed),
    ];
    for (token, expected) in cases {
        assert_eq!(validator.validate(&token).err(), Some(expected.clone()), "{expected:?}");
    }
    assert!(validator.validate(&valid).is_ok());
    assert!(validator.validate(&with("aud", json!(["x", AUDIENCE]))).is_ok());
}

#[test]
fn unusable_jwks_are_refused_at_start_up() {
    let key = Key::ec("k1");
    assert!(JwtValidator::new(ISSUER, AUDIENCE, "not json", "scope").is_err());
    assert!(JwtValidator::new(ISSUER, AUDIENCE, r#"{"keys":[]}"#, "scope").is_err());
    let oct = r#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"s"}]}"#;
    assert!(JwtValidator::new(ISSUER, AUDIENCE, oct, "scope").is_err());
    assert!(JwtValidator::new("", AUDIENCE, &jwks(&[&key]), "scope").is_err());
}
