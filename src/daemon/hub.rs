//! The hub: puts what the boards derive in one global order and hands it to
//! the server-sent-event clients.
//!
//! Every journal line gets a global number `g` when it is written (see
//! [`super::journal`]); the events derived from the line are named
//! `<g>.<k>` (`k` counting from 0 within the line). Boards write and sync
//! their lines in parallel, so a line may be synced before an earlier-numbered
//! one: the hub holds each line's events back until every smaller number is
//! published (or given up), so that clients see ids in increasing order and a
//! client resuming after id `x` gets exactly the events after `x`.
//!
//! Because the ids come from the journals, a restarted daemon replays the
//! journals into the same ids: a client's `Last-Event-ID` still works after a
//! restart. The hub keeps the most recent [`LOG_CAPACITY`] events; a client
//! that asks for older ones is told to reload (`resync`).

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    fmt,
    str::FromStr,
    sync::{Arc, Mutex, MutexGuard},
    time::Instant,
};

use tokio::sync::broadcast;

/// How many events the hub keeps for clients that resume.
pub const LOG_CAPACITY: usize = 200_000;

/// The id of a server-sent event: `<g>.<k>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId {
    /// The global number of the journal line the event comes from.
    pub g: u64,
    /// Its index among that line's events.
    pub k: u32,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.g, self.k)
    }
}

impl FromStr for EventId {
    type Err = ();

    fn from_str(s: &str) -> Result<EventId, ()> {
        let s = s.trim();
        let (g, k) = s.split_once('.').unwrap_or((s, "0"));
        Ok(EventId {
            g: g.parse().map_err(|_| ())?,
            k: k.parse().map_err(|_| ())?,
        })
    }
}

/// An event for the clients: its SSE name and JSON data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The SSE event name (`move`, `alert`, ...).
    pub kind: &'static str,
    /// The JSON data.
    pub data: String,
}

/// A published event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Its id.
    pub id: EventId,
    /// The SSE event name.
    pub kind: &'static str,
    /// The JSON data.
    pub data: Arc<str>,
}

#[derive(Debug)]
struct Inner {
    next_g: u64,
    next_publish: u64,
    pending: BTreeMap<u64, Vec<Payload>>,
    log: VecDeque<Arc<Published>>,
    /// The id of the newest event dropped from the log.
    evicted: Option<EventId>,
    last: Option<EventId>,
}

/// The hub (shared by the boards and the HTTP server).
#[derive(Debug)]
pub struct Hub {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Published>>,
    /// For the load test: when each line's input entered the daemon.
    probe: Option<Mutex<HashMap<u64, Instant>>>,
}

/// A reserved global number: publish the line's events with
/// [`Hub::publish`]; dropped unpublished, it is given up so that later
/// numbers are not held back.
#[derive(Debug)]
pub struct Ticket {
    hub: Arc<Hub>,
    g: u64,
    done: bool,
}

impl Ticket {
    /// The global number.
    pub fn g(&self) -> u64 {
        self.g
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.done {
            self.hub.release(self.g, Vec::new());
        }
    }
}

/// What a subscribing client gets: the events it missed, then the live ones.
#[derive(Debug)]
pub struct Subscription {
    /// The events after the client's last id, in order.
    pub backlog: Vec<Arc<Published>>,
    /// Events the log no longer has were missed: the client must reload.
    pub resync: bool,
    /// The live events.
    pub live: broadcast::Receiver<Arc<Published>>,
}

impl Hub {
    /// A hub whose log holds the events replayed from the journals (any
    /// order); new lines are numbered after `max_g`.
    pub fn new(mut replayed: Vec<Published>, max_g: u64, probe: bool) -> Arc<Hub> {
        replayed.sort_by_key(|p| p.id);
        let mut evicted = None;
        if replayed.len() > LOG_CAPACITY {
            let cut = replayed.len() - LOG_CAPACITY;
            evicted = Some(replayed[cut - 1].id);
            replayed.drain(..cut);
        }
        let last = replayed.last().map(|p| p.id).or(evicted);
        let (tx, _) = broadcast::channel(16_384);
        Arc::new(Hub {
            inner: Mutex::new(Inner {
                next_g: max_g + 1,
                next_publish: max_g + 1,
                pending: BTreeMap::new(),
                log: replayed.into_iter().map(Arc::new).collect(),
                evicted,
                last,
            }),
            tx,
            probe: probe.then(|| Mutex::new(HashMap::new())),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves consistent data
        // (every update is a few plain assignments): keep serving.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves the next global number. `entered` is when the input that
    /// the line records reached the daemon (kept for the load test).
    pub fn reserve(self: &Arc<Hub>, entered: Instant) -> Ticket {
        let g = {
            let mut inner = self.lock();
            let g = inner.next_g;
            inner.next_g += 1;
            g
        };
        if let Some(probe) = &self.probe {
            probe
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(g, entered);
        }
        Ticket {
            hub: Arc::clone(self),
            g,
            done: false,
        }
    }

    /// Publishes the events derived from the line numbered by `ticket`
    /// (after that line was synced to disk).
    pub fn publish(&self, mut ticket: Ticket, payloads: Vec<Payload>) {
        ticket.done = true;
        self.release(ticket.g, payloads);
    }

    /// Publishes the events of a line whose number comes from elsewhere (a
    /// central: the stream's sequence, which may skip numbers). Numbers must
    /// increase; a number not above the last one is ignored.
    pub fn publish_at(&self, g: u64, payloads: Vec<Payload>) {
        {
            let mut inner = self.lock();
            if g < inner.next_publish || !inner.pending.is_empty() {
                return;
            }
            inner.next_publish = g;
            inner.next_g = inner.next_g.max(g + 1);
        }
        self.release(g, payloads);
    }

    fn release(&self, g: u64, payloads: Vec<Payload>) {
        let mut inner = self.lock();
        inner.pending.insert(g, payloads);
        loop {
            let next = inner.next_publish;
            let Some(payloads) = inner.pending.remove(&next) else {
                break;
            };
            inner.next_publish += 1;
            for (k, p) in payloads.into_iter().enumerate() {
                let published = Arc::new(Published {
                    id: EventId {
                        g: next,
                        k: u32::try_from(k).unwrap_or(u32::MAX),
                    },
                    kind: p.kind,
                    data: p.data.into(),
                });
                inner.last = Some(published.id);
                if inner.log.len() >= LOG_CAPACITY
                    && let Some(old) = inner.log.pop_front()
                {
                    inner.evicted = Some(old.id);
                }
                inner.log.push_back(Arc::clone(&published));
                // No receiver is not an error: nobody is watching.
                let _ = self.tx.send(published);
            }
        }
    }

    /// Every line numbered below this one was published (so synced by its
    /// board) or given up.
    pub fn released_below(&self) -> u64 {
        self.lock().next_publish
    }

    /// The id of the last published event.
    pub fn last_id(&self) -> Option<EventId> {
        self.lock().last
    }

    /// Subscribes a client that has seen every event up to `after` (`None`:
    /// a new client, which gets only live events).
    pub fn subscribe(&self, after: Option<EventId>) -> Subscription {
        let inner = self.lock();
        let live = self.tx.subscribe();
        let Some(after) = after else {
            return Subscription {
                backlog: Vec::new(),
                resync: false,
                live,
            };
        };
        let resync = inner.evicted.is_some_and(|e| after < e);
        let start = inner.log.partition_point(|p| p.id <= after);
        let backlog = inner.log.range(start..).cloned().collect();
        Subscription {
            backlog,
            resync,
            live,
        }
    }

    /// When the input of line `g` entered the daemon (load test only).
    pub fn entered(&self, g: u64) -> Option<Instant> {
        self.probe
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&g)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(kind: &'static str) -> Payload {
        Payload {
            kind,
            data: "{}".into(),
        }
    }

    #[test]
    fn holds_back_until_earlier_lines_are_published() {
        let hub = Hub::new(Vec::new(), 0, false);
        let mut rx = hub.subscribe(None).live;
        let a = hub.reserve(Instant::now());
        let b = hub.reserve(Instant::now());
        let c = hub.reserve(Instant::now());
        assert_eq!((a.g(), b.g(), c.g()), (1, 2, 3));
        hub.publish(c, vec![p("c0"), p("c1")]);
        assert!(rx.try_recv().is_err());
        drop(b); // given up
        assert!(rx.try_recv().is_err());
        assert_eq!(hub.released_below(), 1);
        hub.publish(a, vec![p("a0")]);
        assert_eq!(hub.released_below(), 4);
        let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| format!("{}:{}", e.id, e.kind))
            .collect();
        assert_eq!(got, ["1.0:a0", "3.0:c0", "3.1:c1"]);
        let sub = hub.subscribe(Some("1.0".parse().unwrap()));
        let ids: Vec<String> = sub.backlog.iter().map(|e| e.id.to_string()).collect();
        assert_eq!(ids, ["3.0", "3.1"]);
        assert!(!sub.resync);
        assert_eq!(hub.last_id(), Some(EventId { g: 3, k: 1 }));
    }

    #[test]
    fn numbers_from_elsewhere_may_skip() {
        let hub = Hub::new(Vec::new(), 0, false);
        let mut rx = hub.subscribe(None).live;
        hub.publish_at(5, vec![p("a")]);
        hub.publish_at(9, vec![]);
        hub.publish_at(12, vec![p("b"), p("c")]);
        hub.publish_at(7, vec![p("stale")]);
        let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| format!("{}:{}", e.id, e.kind))
            .collect();
        assert_eq!(got, ["5.0:a", "12.0:b", "12.1:c"]);
        let sub = hub.subscribe(Some("5.0".parse().unwrap()));
        assert_eq!(sub.backlog.len(), 2);
    }

    #[test]
    fn ids_parse() {
        assert_eq!("12.3".parse(), Ok(EventId { g: 12, k: 3 }));
        assert_eq!("12".parse(), Ok(EventId { g: 12, k: 0 }));
        assert!("x.1".parse::<EventId>().is_err());
        assert!("".parse::<EventId>().is_err());
    }
}
