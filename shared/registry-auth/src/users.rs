//! The users file: one JSON object per line, parsed, edited (`upsert`) and written back atomically.
//!
//! Format (JSON lines; blank lines and lines starting with `#` are ignored):
//! ```text
//! {"user":"alice","role":"admin","hash":"$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>"}
//! {"user":"team-a-app","role":"write","subject_prefixes":["team-a."],"hash":"$argon2id$..."}
//! ```
//! `user` is non-empty, without `:` or control characters (HTTP Basic splits at the first `:`); `role` is
//! `read`, `write` or `admin`; `subject_prefixes` is optional (absent or empty = every subject); `hash` is an
//! argon2 PHC string. Passwords are never stored.

use crate::access::{Role, Scope};
use crate::error::AuthError;
use crate::password::is_valid_hash;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// One user: name, role, optional subject prefixes and the argon2 PHC hash of the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserEntry {
    /// The Basic-auth user name.
    pub user: String,
    /// What the user may do.
    pub role: Role,
    /// Subject prefixes the user is limited to; empty = every subject.
    pub subject_prefixes: Vec<String>,
    /// argon2 PHC string.
    pub hash: String,
}

impl UserEntry {
    /// The entry of `user` with `password` hashed at `cost` (argon2id).
    pub fn with_password(
        user: &str,
        role: Role,
        subject_prefixes: &[&str],
        password: &str,
        cost: crate::HashCost,
    ) -> Result<UserEntry, AuthError> {
        let hash = crate::hash_password(password, cost)?;
        let subject_prefixes = subject_prefixes.iter().map(|prefix| prefix.to_string()).collect();
        Ok(UserEntry { user: user.to_string(), role, subject_prefixes, hash })
    }

    /// The user's scope ([`Scope::All`] when no prefix is set).
    pub fn scope(&self) -> Scope {
        Scope::from_prefixes(self.subject_prefixes.clone())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    user: String,
    role: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subject_prefixes: Vec<String>,
    hash: String,
}

/// The parsed users file, in file order, user names unique.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsersFile {
    entries: Vec<UserEntry>,
}

/// Whether `name` can be a Basic-auth user name (non-empty, no `:`, no control characters).
pub fn is_valid_user_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(':') && !name.chars().any(char::is_control)
}

impl UsersFile {
    /// Parses the file text. Errors name the line number and never include a hash.
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        let mut file = UsersFile::default();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let invalid = |reason: String| AuthError::UsersFile { line: number, reason };
            let raw: Line = serde_json::from_str(trimmed).map_err(|error| {
                invalid(format!("not a user entry (line {}, column {})", error.line(), error.column()))
            })?;
            let role = raw.role.parse::<Role>().map_err(|error| invalid(error.to_string()))?;
            if !is_valid_user_name(&raw.user) {
                return Err(invalid("user names must be non-empty, without ':' or control characters".into()));
            }
            if raw.subject_prefixes.iter().any(String::is_empty) {
                return Err(invalid("empty subject prefix".into()));
            }
            if !is_valid_hash(&raw.hash) {
                return Err(invalid(format!("user {:?}: hash is not an argon2 PHC string", raw.user)));
            }
            if file.get(&raw.user).is_some() {
                return Err(invalid(format!("user {:?} appears twice", raw.user)));
            }
            file.entries.push(UserEntry {
                user: raw.user,
                role,
                subject_prefixes: raw.subject_prefixes,
                hash: raw.hash,
            });
        }
        Ok(file)
    }

    /// The file text: one line per entry, in order, ending with a newline. `parse(render())` round-trips.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for entry in &self.entries {
            let line = Line {
                user: entry.user.clone(),
                role: entry.role.as_str().to_string(),
                subject_prefixes: entry.subject_prefixes.clone(),
                hash: entry.hash.clone(),
            };
            if let Ok(json) = serde_json::to_string(&line) {
                text.push_str(&json);
                text.push('\n');
            }
        }
        text
    }

    /// The entry for `user`, if any.
    pub fn get(&self, user: &str) -> Option<&UserEntry> {
        self.entries.iter().find(|entry| entry.user == user)
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[UserEntry] {
        &self.entries
    }

    /// Replaces the entry with the same user name in place, or appends it. Returns whether one was replaced.
    pub fn upsert(&mut self, entry: UserEntry) -> bool {
        match self.entries.iter_mut().find(|existing| existing.user == entry.user) {
            Some(existing) => {
                *existing = entry;
                true
            }
            None => {
                self.entries.push(entry);
                false
            }
        }
    }

    /// Reads and parses `path`; a missing file is an empty users file only when `missing_ok`.
    pub fn load(path: &Path, missing_ok: bool) -> Result<Self, AuthError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text),
            Err(error) if missing_ok && error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(AuthError::Io { path: path.display().to_string(), reason: error.to_string() }),
        }
    }

    /// Writes the file atomically: a temporary file in the same directory (mode 0600 on Unix), flushed to
    /// disk, then renamed over `path`. Readers see the old or the new file, never a partial one.
    pub fn save_atomic(&self, path: &Path) -> Result<(), AuthError> {
        let io = |error: std::io::Error| AuthError::Io { path: path.display().to_string(), reason: error.to_string() };
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary = directory.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&temporary).and_then(|mut file| {
            file.write_all(self.render().as_bytes())?;
            file.sync_all()
        });
        if let Err(error) = written.and_then(|()| std::fs::rename(&temporary, path)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(io(error));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::password::{HashCost, hash_password};

    fn hash(password: &str) -> String {
        hash_password(password, HashCost::TEST).unwrap_or_else(|e| panic!("{e}"))
    }

    fn entry(user: &str, role: Role, prefixes: &[&str]) -> UserEntry {
        UserEntry {
            user: user.into(),
            role,
            subject_prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
            hash: hash("pw"),
        }
    }

    #[test]
    fn render_and_parse_round_trip() {
        let mut file = UsersFile::default();
        assert!(!file.upsert(entry("alice", Role::Admin, &[])));
        assert!(!file.upsert(entry("bob", Role::Write, &["team-a.", "shared."])));
        let text = file.render();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains(r#""subject_prefixes":["team-a.","shared."]"#), "{text}");
        assert!(!text.lines().next().unwrap_or_default().contains("subject_prefixes"));
        assert_eq!(UsersFile::parse(&text).unwrap_or_else(|e| panic!("{e}")), file);
    }

    #[test]
    fn upsert_replaces_in_place() {
        let mut file = UsersFile::default();
        file.upsert(entry("alice", Role::Read, &[]));
        file.upsert(entry("bob", Role::Read, &[]));
        assert!(file.upsert(entry("alice", Role::Admin, &["x."])));
        let names: Vec<&str> = file.entries().iter().map(|e| e.user.as_str()).collect();
        assert_eq!(names, ["alice", "bob"]);
        assert_eq!(file.get("alice").map(|e| e.role), Some(Role::Admin));
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let text = format!("# users\n\n{}", UsersFile { entries: vec![entry("a", Role::Read, &[])] }.render());
        assert_eq!(UsersFile::parse(&text).map(|f| f.entries().len()).ok(), Some(1));
    }

    #[test]
    fn bad_entries_name_the_line_and_never_the_hash() {
        let good = hash("pw");
        let cases = [
            (format!(r#"{{"user":"a","role":"root","hash":"{good}"}}"#), "unknown role"),
            (format!(r#"{{"user":"a:b","role":"read","hash":"{good}"}}"#), "user names"),
            (format!(r#"{{"user":"","role":"read","hash":"{good}"}}"#), "user names"),
            (r#"{"user":"a","role":"read","hash":"secret-plaintext"}"#.to_string(), "not an argon2"),
            (format!(r#"{{"user":"a","role":"read","subject_prefixes":[""],"hash":"{good}"}}"#), "empty subject"),
            (format!(r#"{{"user":"a","role":"read","hash":"{good}","password":"x"}}"#), "not a user entry"),
            ("not json".to_string(), "not a user entry"),
        ];
        for (line, expected) in cases {
            let text = format!("# header\n{line}\n");
            let error = UsersFile::parse(&text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains("line 2") && error.contains(expected), "{line}: {error}");
            assert!(!error.contains("secret-plaintext") && !error.contains(&good), "{error}");
        }
        let duplicate = format!(
            "{}{}",
            UsersFile { entries: vec![entry("a", Role::Read, &[])] }.render(),
            UsersFile { entries: vec![entry("a", Role::Admin, &[])] }.render()
        );
        assert!(UsersFile::parse(&duplicate).err().map(|e| e.to_string()).unwrap_or_default().contains("twice"));
    }

    #[test]
    fn save_atomic_writes_a_private_file_and_load_reads_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("users.jsonl");
        assert_eq!(UsersFile::load(&path, true).ok(), Some(UsersFile::default()));
        assert!(UsersFile::load(&path, false).is_err());
        let mut file = UsersFile::default();
        file.upsert(entry("alice", Role::Admin, &[]));
        file.save_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(UsersFile::load(&path, false).ok(), Some(file));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).map(|d| d.flatten().count()).into_iter().collect();
        assert_eq!(leftovers, [1]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default();
            assert_eq!(mode, 0o600);
        }
    }
}
