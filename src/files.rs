//! A file that cannot be read, said the way a user needs it: its purpose,
//! its full path, and the reason in words ("lichess token file
//! /srv/lichess.token: no such file").

use std::{io, path::Path};

/// The reason an I/O operation on a file failed, in lower-case words and
/// without the operating system's error number.
pub fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::IsADirectory => "is a directory".to_owned(),
        io::ErrorKind::InvalidData => "not UTF-8 text".to_owned(),
        _ => {
            let text = e.to_string();
            // "Broken pipe (os error 32)" -> "broken pipe"
            let text = text.split(" (os error").next().unwrap_or(&text);
            let mut chars = text.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => text.to_owned(),
            }
        }
    }
}

/// `<purpose> <path>: <reason>`, as every message about an unreadable file
/// is written; `path` is shown as given, made absolute when relative.
pub fn unreadable(purpose: &str, path: &Path, e: &io::Error) -> String {
    let shown = match path.is_relative() {
        true => std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_owned()),
        false => path.to_owned(),
    };
    format!("{purpose} {}: {}", shown.display(), reason(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_named_in_full_with_its_purpose() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tok");
        let e = std::fs::read(&path).unwrap_err();
        assert_eq!(
            unreadable("lichess token file", &path, &e),
            format!("lichess token file {}: no such file", path.display())
        );
        let e = std::fs::read_to_string(dir.path()).unwrap_err();
        assert!(!reason(&e).contains("os error"), "{}", reason(&e));
    }

    #[test]
    fn a_relative_path_is_shown_from_the_current_directory() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let text = unreadable("event file", Path::new("event.toml"), &e);
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            text,
            format!(
                "event file {}: no such file",
                cwd.join("event.toml").display()
            )
        );
        assert_eq!(
            reason(&io::Error::other("Broken pipe (os error 32)")),
            "broken pipe"
        );
    }
}
