//! What hall nodes and the central share about the NATS JetStream broker:
//! the settings, the stream, and how a line travels.
//!
//! One stream (default `EBOARD`, file storage) holds the whole event:
//!
//! | subject | body | headers |
//! |---|---|---|
//! | `EBOARD.board.<n>` | a journal line of board `n`, exactly as the hall node wrote it | `Eboard-Node` (the hall node), `Nats-Msg-Id` `<node>/<n>/<seq>` |
//! | `EBOARD.action.<n>` | an arbiter action taken at a central on board `n` | `Eboard-Node` (the central), `Nats-Msg-Id` `action/<request>` |
//!
//! The message id makes the broker drop a line sent twice (a hall node
//! catching up after an outage re-sends what it is not sure of); the
//! central also skips any line of a board it already has, so a re-send
//! older than the broker's duplicate window changes nothing either.

use std::{path::PathBuf, time::Duration};

use async_nats::jetstream;

use super::{DaemonError, config::PublishConfig};

/// The stream's name when the config gives none.
pub const DEFAULT_STREAM: &str = "EBOARD";
/// The header naming the node that published a message.
pub const NODE_HEADER: &str = "Eboard-Node";

/// The header naming the hall node's instance: a random id made with its
/// data directory. A hall PC replaced under the same node name has a new
/// one, and the central starts its boards as new games (`hall_replaced`).
pub const INSTANCE_HEADER: &str = "Eboard-Instance";
/// How long the broker keeps a line when the config does not say.
pub const DEFAULT_MAX_AGE_DAYS: u32 = 14;
/// How long the broker remembers a message id to drop a re-send.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(600);

/// How to reach the broker and what to call things there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatsSettings {
    /// `nats://HOST:PORT`.
    pub url: String,
    /// A NATS credentials file.
    pub credentials: Option<PathBuf>,
    /// This node's name (sent with every message).
    pub node: String,
    /// A hall node's instance (see [`INSTANCE_HEADER`]), from its data
    /// directory; `None` for the central.
    pub instance: Option<String>,
    /// The stream.
    pub stream: String,
    /// How long the broker keeps a message.
    pub max_age: Duration,
}

/// What a message of the stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A journal line of a board, from a hall node.
    Board(u32),
    /// An arbiter action on a board, from a central.
    Action(u32),
}

fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "eboard".to_owned())
}

fn usage(message: String) -> DaemonError {
    DaemonError::Usage(message)
}

/// A name the broker's subjects and ids can carry: 1 to `max` letters,
/// digits or `extra` bytes.
fn check_name(what: &str, name: &str, max: usize, extra: &[u8]) -> Result<(), DaemonError> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || extra.contains(&b));
    if ok {
        return Ok(());
    }
    let extra: Vec<String> = extra.iter().map(|&b| format!("'{}'", b as char)).collect();
    Err(usage(format!(
        "{what} name '{name}': use 1 to {max} letters, digits or {}",
        extra.join(", ")
    )))
}

impl NatsSettings {
    /// A hall node's settings: `--publish` or the `[publish]` table's url;
    /// `None` when neither asks to publish.
    pub fn for_hall(
        table: Option<&PublishConfig>,
        flag: Option<&str>,
    ) -> Result<Option<NatsSettings>, DaemonError> {
        let url = flag
            .map(str::to_owned)
            .or(table.and_then(|t| t.url.clone()));
        url.map(|url| NatsSettings::new(table, url)).transpose()
    }

    /// A central's settings: `--from` with the `[publish]` table's other keys.
    pub fn for_central(
        table: Option<&PublishConfig>,
        from: Option<&str>,
    ) -> Result<NatsSettings, DaemonError> {
        let url = from
            .map(str::to_owned)
            .or(table.and_then(|t| t.url.clone()))
            .ok_or_else(|| {
                usage("`eboard serve` needs the broker: --from nats://HOST:PORT (or url in the [publish] table)".into())
            })?;
        NatsSettings::new(table, url)
    }

    fn new(table: Option<&PublishConfig>, url: String) -> Result<NatsSettings, DaemonError> {
        let scheme_ok = ["nats://", "tls://"].iter().any(|s| url.starts_with(s));
        if !scheme_ok || url.contains(char::is_whitespace) {
            return Err(usage(format!(
                "'{url}' is not a NATS broker address: expected nats://HOST:PORT"
            )));
        }
        let node = table.and_then(|t| t.node.clone()).unwrap_or_else(host_name);
        check_name("node", &node, 64, b"-_.")?;
        let stream = table
            .and_then(|t| t.stream.clone())
            .unwrap_or_else(|| DEFAULT_STREAM.to_owned());
        check_name("stream", &stream, 32, b"-_")?;
        let days = table
            .and_then(|t| t.max_age_days)
            .unwrap_or(DEFAULT_MAX_AGE_DAYS);
        if days == 0 {
            return Err(usage("max_age_days must be at least 1".into()));
        }
        Ok(NatsSettings {
            url,
            credentials: table.and_then(|t| t.credentials.clone()),
            node,
            instance: None,
            stream,
            max_age: Duration::from_secs(u64::from(days) * 86_400),
        })
    }

    /// Where board `n`'s journal lines go.
    pub fn board_subject(&self, board: u32) -> String {
        format!("{}.board.{board}", self.stream)
    }

    /// Where arbiter actions on board `n` go.
    pub fn action_subject(&self, board: u32) -> String {
        format!("{}.action.{board}", self.stream)
    }

    /// Reads a subject of the stream.
    pub fn parse_subject(&self, subject: &str) -> Option<Subject> {
        let rest = subject.strip_prefix(&self.stream)?.strip_prefix('.')?;
        let (kind, n) = rest.split_once('.')?;
        let n: u32 = n.parse().ok()?;
        match kind {
            "board" => Some(Subject::Board(n)),
            "action" => Some(Subject::Action(n)),
            _ => None,
        }
    }

    /// The message id of a board's journal line (with the instance, so
    /// that the broker never drops a replaced hall's lines as copies of the
    /// old one's).
    pub fn line_id(&self, board: u32, seq: u64) -> String {
        match &self.instance {
            Some(instance) => format!("{}.{instance}/{board}/{seq}", self.node),
            None => format!("{}/{board}/{seq}", self.node),
        }
    }

    /// The stream's configuration (created this way when missing).
    fn stream_config(&self) -> jetstream::stream::Config {
        jetstream::stream::Config {
            name: self.stream.clone(),
            subjects: vec![format!("{}.>", self.stream)],
            storage: jetstream::stream::StorageType::File,
            max_age: self.max_age,
            duplicate_window: DUPLICATE_WINDOW.min(self.max_age),
            ..Default::default()
        }
    }

    /// Connects to the broker; the connection is made (and made again
    /// after any loss) in the background, so this returns at once.
    pub async fn connect(&self) -> Result<async_nats::Client, DaemonError> {
        let mut options = async_nats::ConnectOptions::new()
            .name(format!("eboard {}", self.node))
            .retry_on_initial_connect()
            .max_reconnects(None)
            // Quick to come back after a short outage, without hammering a
            // broker that is down for longer.
            .reconnect_delay_callback(|attempts| {
                Duration::from_millis((250 * attempts as u64).min(2000))
            });
        if let Some(path) = &self.credentials {
            options = options
                .credentials_file(path)
                .await
                .map_err(|e| usage(format!("{}: {e}", path.display())))?;
        }
        options
            .connect(self.url.as_str())
            .await
            .map_err(|e| DaemonError::Nats {
                url: self.url.clone(),
                message: e.to_string(),
            })
    }

    /// The stream, created (file storage, the configured max age) when
    /// missing.
    pub async fn stream(
        &self,
        js: &jetstream::Context,
    ) -> Result<jetstream::stream::Stream, String> {
        js.get_or_create_stream(self.stream_config())
            .await
            .map_err(|e| format!("stream {}: {e}", self.stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_subjects() {
        let table = PublishConfig {
            node: Some("hall-a".into()),
            max_age_days: Some(3),
            ..PublishConfig::default()
        };
        assert_eq!(NatsSettings::for_hall(Some(&table), None).unwrap(), None);
        let s = NatsSettings::for_hall(Some(&table), Some("nats://127.0.0.1:4222"))
            .unwrap()
            .unwrap();
        assert_eq!(s.stream, "EBOARD");
        assert_eq!(s.max_age, Duration::from_secs(3 * 86_400));
        assert_eq!(s.board_subject(12), "EBOARD.board.12");
        assert_eq!(s.parse_subject("EBOARD.board.12"), Some(Subject::Board(12)));
        assert_eq!(s.parse_subject("EBOARD.action.3"), Some(Subject::Action(3)));
        assert_eq!(s.parse_subject("EBOARD.board.x"), None);
        assert_eq!(s.parse_subject("OTHER.board.1"), None);
        assert_eq!(s.parse_subject("EBOARDX.board.1"), None);
        assert_eq!(s.line_id(12, 7), "hall-a/12/7");
        assert!(NatsSettings::for_central(None, None).is_err());
        assert!(NatsSettings::for_central(None, Some("http://x")).is_err());
        let bad_node = PublishConfig {
            node: Some("hall a".into()),
            ..PublishConfig::default()
        };
        assert!(NatsSettings::for_central(Some(&bad_node), Some("nats://h:1")).is_err());
        let default = NatsSettings::for_central(None, Some("nats://h:1")).unwrap();
        assert_eq!(default.max_age, Duration::from_secs(14 * 86_400));
    }
}
