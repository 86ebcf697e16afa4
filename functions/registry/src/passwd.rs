//! `registry passwd USER --role ROLE [--subject-prefix P]...`: adds or replaces a user in the users file,
//! reading the password from standard input (first line) and storing only its argon2id hash.

use registry_auth::{HashCost, Role, UserEntry, UsersFile};
use std::io::BufRead;
use std::path::PathBuf;

/// Arguments of `registry passwd`.
#[derive(Debug, Clone, clap::Args)]
pub struct PasswdArgs {
    /// The user name (no `:`, no control characters).
    pub user: String,

    /// `read`, `write` or `admin`.
    #[arg(long, value_parser = parse_role)]
    pub role: Role,

    /// Limit the user to subjects starting with this prefix (repeatable; none = every subject).
    #[arg(long = "subject-prefix", value_name = "PREFIX")]
    pub subject_prefixes: Vec<String>,

    /// The users file to edit (created if missing, replaced atomically, mode 0600).
    #[arg(long, env = "REGISTRY_USERS_FILE")]
    pub users_file: PathBuf,
}

fn parse_role(value: &str) -> Result<Role, String> {
    value.parse::<Role>().map_err(|error| error.to_string())
}

/// Reads the password from `input`, hashes it and writes the users file. Returns whether an existing
/// entry was replaced. The password is never printed or logged.
pub fn apply(args: &PasswdArgs, input: &mut dyn BufRead, cost: HashCost) -> Result<bool, String> {
    if !registry_auth::users::is_valid_user_name(&args.user) {
        return Err(format!("invalid user name {:?}: non-empty, without ':' or control characters", args.user));
    }
    if args.subject_prefixes.iter().any(String::is_empty) {
        return Err("--subject-prefix must not be empty".into());
    }
    let mut line = String::new();
    input.read_line(&mut line).map_err(|error| format!("cannot read the password from stdin: {error}"))?;
    let password = line.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err("empty password: write it on standard input".into());
    }
    let mut users = UsersFile::load(&args.users_file, true).map_err(|error| error.to_string())?;
    let prefixes: Vec<&str> = args.subject_prefixes.iter().map(String::as_str).collect();
    let entry = UserEntry::with_password(&args.user, args.role, &prefixes, password, cost)
        .map_err(|error| error.to_string())?;
    let replaced = users.upsert(entry);
    users.save_atomic(&args.users_file).map_err(|error| error.to_string())?;
    Ok(replaced)
}

/// `registry passwd`: [`apply`] on standard input with argon2's default cost; one line on stderr.
pub fn run(args: &PasswdArgs) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let replaced = apply(args, &mut std::io::stdin().lock(), HashCost::DEFAULT)?;
    let verb = if replaced { "replaced" } else { "added" };
    tracing::info!("{verb} user {:?} (role {}) in {}", args.user, args.role, args.users_file.display());
    Ok(())
}
