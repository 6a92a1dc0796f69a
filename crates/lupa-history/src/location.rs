//! Which store a `--db` names: a PostgreSQL database when it is a
//! `postgres://` or `postgresql://` URL ([`is_url`]), else a SQLite file;
//! and a URL as messages show it ([`redact`]: without its password). Both are
//! known without the `postgres` feature, so that a build without it refuses
//! a URL clearly instead of taking it for a file name.

/// Does `db` name a PostgreSQL database (`postgres://...` or
/// `postgresql://...`) rather than a SQLite file?
pub fn is_url(db: &str) -> bool {
    let lower = db.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// `url` without its password (`postgres://user:secret@host/db` ->
/// `postgres://user@host/db`), for messages.
pub fn redact(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}{}",
            &url[..start],
            &userinfo[..colon],
            &url[start + at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_recognised_and_redacted() {
        assert!(is_url("postgres://u@h:5/db"));
        assert!(is_url("postgresql://h/db"));
        assert!(is_url("PostgreSQL://h/db"));
        assert!(!is_url(".lupa/profiles.db"));
        assert!(!is_url("postgres.db"));
        assert_eq!(
            redact("postgres://user:s3cr:et@host:5432/db?x=1"),
            "postgres://user@host:5432/db?x=1"
        );
        assert_eq!(redact("postgres://user@host/db"), "postgres://user@host/db");
        assert_eq!(redact("postgres://host/db"), "postgres://host/db");
        assert_eq!(redact("postgres://host/a@b:c"), "postgres://host/a@b:c");
    }
}
