//! The reference documents every command-line flag and every event-file
//! key: the flags come from clap's own description of the command line,
//! the keys from the config types' `Deserialize` implementations, so a
//! flag or key added without its line in `docs/reference/` fails here,
//! listing exactly what is missing.

use std::{cell::RefCell, collections::BTreeSet};

use clap::CommandFactory;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
    value::{BorrowedStrDeserializer, Error},
};

use crate::util::{read, root};

/// Every visible flag of every visible subcommand, as `(command, --flag)`.
fn cli_flags() -> Vec<(String, String)> {
    let cli = eboard::cli::Cli::command();
    let mut flags = Vec::new();
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        flags.push((sub.get_name().to_owned(), String::new()));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long()
                && long != "help"
                && long != "version"
            {
                flags.push((sub.get_name().to_owned(), format!("--{long}")));
            }
        }
    }
    flags
}

/// The part of `text` under the heading ``## `eboard <command>` ``, up to
/// the next second-level heading.
fn section<'a>(text: &'a str, command: &str) -> Option<&'a str> {
    let heading = format!("\n## `eboard {command}`");
    let start = text.find(&heading)? + heading.len();
    let rest = &text[start..];
    Some(&rest[..rest.find("\n## ").unwrap_or(rest.len())])
}

#[test]
fn every_flag_is_in_the_cli_reference() {
    let path = root().join("docs/reference/cli.md");
    let text = read(&path);
    let missing: Vec<String> = cli_flags()
        .into_iter()
        .filter(|(command, flag)| match section(&text, command) {
            None => true,
            Some(body) => !flag.is_empty() && !body.contains(&format!("`{flag}")),
        })
        .map(|(command, flag)| match flag.is_empty() {
            true => format!("eboard {command} (no \"## `eboard {command}`\" section)"),
            false => format!("eboard {command} {flag}"),
        })
        .collect();
    // A section missing makes each of its flags missing too: say it once.
    assert!(
        missing.is_empty(),
        "{} does not document:\n  {}",
        path.display(),
        missing.join("\n  ")
    );
}

#[test]
fn every_config_key_is_in_the_config_reference() {
    let keys = config_keys();
    // The walk itself is checked against keys known to exist, so that a
    // walk that stops early cannot pass.
    for known in [
        "event",
        "board.id",
        "board.white.name",
        "lichess.slice.boards",
    ] {
        assert!(keys.contains(known), "the walk missed {known}: {keys:?}");
    }
    let path = root().join("docs/reference/config.md");
    let text = read(&path);
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            ![format!("`{k}`"), format!("[{k}]")]
                .iter()
                .any(|form| text.contains(form.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} does not document the keys:\n  {}",
        path.display(),
        missing
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// Every alert kind the engine raises has its row in the arbiter's guide.
#[test]
fn every_alert_kind_is_in_the_arbiters_guide() {
    let path = root().join("docs/guide/arbiter.md");
    let text = read(&path);
    let missing: Vec<&str> = eboard::AlertKind::ALL
        .iter()
        .map(|k| k.as_str())
        .filter(|k| !text.contains(&format!("| `{k}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "{} does not list the alerts:\n  {}",
        path.display(),
        missing.join("\n  ")
    );
}

/// Every key of the event file, dotted (`board.white.name`), found by
/// running the config types' `Deserialize` against a deserializer that
/// records the field names each struct asks for.
fn config_keys() -> BTreeSet<String> {
    let walk = Walk::default();
    let result = de::Deserialize::deserialize(Collect {
        path: String::new(),
        walk: &walk,
    })
    .map(|_: eboard::daemon::config::EventConfig| ());
    if let Err(e) = result {
        panic!(
            "walking the config types stopped at '{}': {e}; give that key a sample value in `sample`",
            walk.at.borrow()
        );
    }
    walk.keys.into_inner()
}

#[derive(Default)]
struct Walk {
    keys: RefCell<BTreeSet<String>>,
    /// The key whose value is being read, for the error message.
    at: RefCell<String>,
}

/// A value that the key's own parser accepts (the walk needs the whole
/// struct read to go on to the next key).
fn sample(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or(path) {
        "source" => "pgn:games.pgn",
        "date" => "2026.01.01",
        "rules" => "standard",
        "boards" => "1-2",
        "delay" => "15m",
        _ => "x",
    }
}

struct Collect<'a> {
    path: String,
    walk: &'a Walk,
}

impl<'a> Collect<'a> {
    fn child(&self, field: &str) -> Collect<'a> {
        let path = match self.path.is_empty() {
            true => field.to_owned(),
            false => format!("{}.{field}", self.path),
        };
        Collect {
            path,
            walk: self.walk,
        }
    }
}

impl<'de> Deserializer<'de> for Collect<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str(sample(&self.path))
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(false)
    }
    fn deserialize_i8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(1.0)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(1.0)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }
    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(One(Some(self)))
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_map(Fields {
            parent: self,
            fields: [].iter(),
            next: None,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        // toml's `Spanned` reads itself as a struct of private fields: those
        // are no keys of the file.
        for f in fields.iter().filter(|f| !f.starts_with("$__")) {
            self.walk.keys.borrow_mut().insert(self.child(f).path);
        }
        v.visit_map(Fields {
            parent: self,
            fields: fields.iter(),
            next: None,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_enum(FirstVariant(variants.first().copied().unwrap_or("")))
    }

    serde::forward_to_deserialize_any! {
        char str string bytes byte_buf tuple tuple_struct identifier ignored_any
    }
}

/// A sequence of one element (a `[[board]]` array with one table).
struct One<'a>(Option<Collect<'a>>);

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.take().map(|c| seed.deserialize(c)).transpose()
    }
}

/// A struct's fields, each with a value read by the walk.
struct Fields<'a> {
    parent: Collect<'a>,
    fields: std::slice::Iter<'static, &'static str>,
    next: Option<&'static str>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        self.next = self.fields.next().copied();
        self.next
            .map(|f| seed.deserialize(BorrowedStrDeserializer::<Error>::new(f)))
            .transpose()
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let child = self.parent.child(self.next.unwrap_or(""));
        *self.parent.walk.at.borrow_mut() = child.path.clone();
        seed.deserialize(child)
    }
}

/// An enum read as its first variant, a unit one.
struct FirstVariant(&'static str);

impl<'de> EnumAccess<'de> for FirstVariant {
    type Error = Error;
    type Variant = FirstVariant;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let name = seed.deserialize(BorrowedStrDeserializer::<Error>::new(self.0))?;
        Ok((name, self))
    }
}

impl<'de> VariantAccess<'de> for FirstVariant {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Error> {
        Err(de::Error::custom("the walk reads unit variants only"))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Error> {
        Err(de::Error::custom("the walk reads unit variants only"))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(de::Error::custom("the walk reads unit variants only"))
    }
}
