//! The users of the cases served with authentication on ([`crate::Serving::Authenticated`]): the
//! same users file for the in-process server and the Lambda function (`REGISTRY_USERS`).
//!
//! | user | role | subjects |
//! |---|---|---|
//! | `admin` | admin | all |
//! | `writer` | write | all |
//! | `reader` | read | all |
//! | `team-a` | write | starting with `team-a.` |
//! | `ctx-a` | write | in context `.ctx-a` (starting with `:.ctx-a:`) |
//! | `team-a-admin` | admin | starting with `team-a.` |
//! | `ctx-a-admin` | admin | in context `.ctx-a` (starting with `:.ctx-a:`) |
//! | `team-a-reader` | read | starting with `team-a.` |
//! | `orders-reader` | read | starting with `orders` |
//! | `ctx-a-team-b-admin` | admin | in context `.ctx-a`, or starting with `:.ctx-b:team-b.` |
//!
//! Each password is `<user>-secret`.

use base64::Engine;
use registry_auth::{Authenticator, HashCost, Role, UserEntry, UsersFile};
use std::sync::{Arc, OnceLock};

/// The users file text (hashed once per test process, at the test cost).
pub fn users_file() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut file = UsersFile::default();
        let users: [(&str, Role, &[&str]); 10] = [
            ("admin", Role::Admin, &[]),
            ("writer", Role::Write, &[]),
            ("reader", Role::Read, &[]),
            ("team-a", Role::Write, &["team-a."]),
            ("ctx-a", Role::Write, &[":.ctx-a:"]),
            ("team-a-admin", Role::Admin, &["team-a."]),
            ("ctx-a-admin", Role::Admin, &[":.ctx-a:"]),
            ("team-a-reader", Role::Read, &["team-a."]),
            ("orders-reader", Role::Read, &["orders"]),
            ("ctx-a-team-b-admin", Role::Admin, &[":.ctx-a:", ":.ctx-b:team-b."]),
        ];
        for (user, role, prefixes) in users {
            let entry = UserEntry::with_password(user, role, prefixes, &password(user), HashCost::TEST);
            file.upsert(entry.unwrap_or_else(|error| panic!("hashing a test password: {error}")));
        }
        file.render()
    })
}

/// The authenticator over [`users_file`].
pub fn authenticator() -> Arc<Authenticator> {
    let file = match UsersFile::parse(users_file()) {
        Ok(file) => file,
        Err(error) => panic!("the test users file: {error}"),
    };
    match Authenticator::new(&file, None) {
        Ok(authenticator) => Arc::new(authenticator),
        Err(error) => panic!("the test authenticator: {error}"),
    }
}

/// `user`'s password.
pub fn password(user: &str) -> String {
    format!("{user}-secret")
}

/// The `Authorization` header value of `user`.
pub fn basic(user: &str) -> String {
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{}", password(user)));
    format!("Basic {credentials}")
}
