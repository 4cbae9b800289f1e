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
//! restart. The hub keeps the most recent events, at most [`LOG_CAPACITY`]
//! of them and at most [`LOG_BYTES`] of memory; a client that asks for
//! older ones is told to reload (`resync`).

use std::{
    collections::{BTreeMap, VecDeque},
    fmt,
    str::FromStr,
    sync::{Arc, Mutex, MutexGuard},
    time::Instant,
};

use tokio::sync::broadcast;

/// How many events the hub keeps at most for clients that resume.
pub const LOG_CAPACITY: usize = 200_000;

/// How much memory (bytes) the events kept for clients that resume may take
/// at most, counted as [`Logged::cost`]: at 5,000 boards the daemon makes
/// about 7,500 events a second, so a log bounded in events alone held
/// 200,000 of them (about 30 MiB); bounded so, it keeps more than 100,000
/// typical events in about half the memory, and fewer when they are long.
pub const LOG_BYTES: usize = 16 << 20;

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

/// An event as the log keeps it: in place, with its data shared with the
/// live event (one allocation per event, not two).
#[derive(Debug, Clone)]
struct Logged {
    id: EventId,
    kind: &'static str,
    data: Arc<str>,
}

impl Logged {
    fn of(p: &Published) -> Logged {
        Logged {
            id: p.id,
            kind: p.kind,
            data: Arc::clone(&p.data),
        }
    }

    fn published(&self) -> Arc<Published> {
        Arc::new(Published {
            id: self.id,
            kind: self.kind,
            data: Arc::clone(&self.data),
        })
    }

    /// The memory the log spends on it: its place in the log, the data and
    /// the data's counts.
    fn cost(&self) -> usize {
        std::mem::size_of::<Logged>() + self.data.len() + 2 * std::mem::size_of::<usize>()
    }
}

/// The events kept for clients that resume, oldest first, bounded in
/// number and in bytes.
#[derive(Debug, Default)]
struct Log {
    events: VecDeque<Logged>,
    /// The sum of the events' [`Logged::cost`].
    bytes: usize,
    /// The id of the newest event dropped.
    evicted: Option<EventId>,
}

impl Log {
    fn push(&mut self, event: Logged, max_events: usize, max_bytes: usize) {
        self.bytes += event.cost();
        self.events.push_back(event);
        while self.events.len() > max_events || self.bytes > max_bytes && self.events.len() > 1 {
            let Some(old) = self.events.pop_front() else {
                break;
            };
            self.bytes -= old.cost();
            self.evicted = Some(old.id);
        }
    }

    /// Whether events after `after` were dropped.
    fn missed(&self, after: EventId) -> bool {
        self.evicted.is_some_and(|e| after < e)
    }

    /// The index of the first event after `after`.
    fn start(&self, after: EventId) -> usize {
        self.events.partition_point(|p| p.id <= after)
    }

    fn range(&self, start: usize, end: usize) -> Vec<Arc<Published>> {
        self.events
            .range(start..end)
            .map(Logged::published)
            .collect()
    }
}

#[derive(Debug)]
struct Inner {
    next_g: u64,
    next_publish: u64,
    pending: BTreeMap<u64, Vec<Payload>>,
    log: Log,
    /// The bounds of the log (see [`LOG_CAPACITY`] and [`LOG_BYTES`]).
    max_events: usize,
    max_bytes: usize,
    last: Option<EventId>,
}

/// The hub (shared by the boards and the HTTP server).
#[derive(Debug)]
pub struct Hub {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Published>>,
    /// For the load test: when each line's input entered the daemon.
    probe: Option<Mutex<BTreeMap<u64, Instant>>>,
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

/// One page of the log for a client catching up (see [`Hub::page`]).
#[derive(Debug)]
pub struct Page {
    /// The events, in order.
    pub events: Vec<Arc<Published>>,
    /// Events after the client's id were dropped from the log: it must
    /// reload.
    pub resync: bool,
    /// Set on the last page: the live events after it.
    pub live: Option<broadcast::Receiver<Arc<Published>>>,
}

impl Hub {
    /// A hub whose log holds the events replayed from the journals (any
    /// order); new lines are numbered after `max_g`.
    pub fn new(replayed: Vec<Published>, max_g: u64, probe: bool) -> Arc<Hub> {
        Hub::bounded(replayed, max_g, probe, LOG_CAPACITY, LOG_BYTES)
    }

    /// [`Hub::new`] with a log of at most `max_events` events and
    /// `max_bytes` bytes.
    pub fn bounded(
        mut replayed: Vec<Published>,
        max_g: u64,
        probe: bool,
        max_events: usize,
        max_bytes: usize,
    ) -> Arc<Hub> {
        replayed.sort_by_key(|p| p.id);
        let mut log = Log::default();
        for p in &replayed {
            log.push(Logged::of(p), max_events, max_bytes);
        }
        let last = replayed.last().map(|p| p.id);
        let (tx, _) = broadcast::channel(16_384);
        Arc::new(Hub {
            inner: Mutex::new(Inner {
                next_g: max_g + 1,
                next_publish: max_g + 1,
                pending: BTreeMap::new(),
                log,
                max_events,
                max_bytes,
                last,
            }),
            tx,
            probe: probe.then(|| Mutex::new(BTreeMap::new())),
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
                let (max_events, max_bytes) = (inner.max_events, inner.max_bytes);
                inner
                    .log
                    .push(Logged::of(&published), max_events, max_bytes);
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
        let resync = inner.log.missed(after);
        let start = inner.log.start(after);
        let backlog = inner.log.range(start, inner.log.events.len());
        Subscription {
            backlog,
            resync,
            live,
        }
    }

    /// Up to `limit` logged events after `after`, for a client catching up
    /// page by page: the lock is held only to copy one page. When the page
    /// reaches the newest event the client is subscribed to the live events
    /// under the same lock, so that nothing falls between the two.
    pub fn page(&self, after: EventId, limit: usize) -> Page {
        let inner = self.lock();
        let resync = inner.log.missed(after);
        let start = inner.log.start(after);
        let end = inner.log.events.len().min(start.saturating_add(limit));
        let events = inner.log.range(start, end);
        let live = (end == inner.log.events.len()).then(|| self.tx.subscribe());
        Page {
            events,
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

    /// [`Hub::entered`] for a reader that sees the lines in order (the load
    /// test's event client): the lines before `g` are forgotten, so that the
    /// probe does not grow with the run (at 5,000 boards it held 40 MiB
    /// after a minute, counted as the daemon's).
    pub fn entered_in_order(&self, g: u64) -> Option<Instant> {
        let mut probe = self
            .probe
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let kept = probe.split_off(&g);
        *probe = kept;
        probe.get(&g).copied()
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

    fn publish_one(hub: &Arc<Hub>, data: &str) {
        let ticket = hub.reserve(Instant::now());
        hub.publish(
            ticket,
            vec![Payload {
                kind: "move",
                data: data.into(),
            }],
        );
    }

    fn ids(events: &[Arc<Published>]) -> Vec<String> {
        events.iter().map(|e| e.id.to_string()).collect()
    }

    #[test]
    fn the_log_is_bounded_in_bytes_and_resumes_what_it_keeps() {
        let data = "x".repeat(100);
        let one = Logged {
            id: EventId { g: 0, k: 0 },
            kind: "move",
            data: data.as_str().into(),
        }
        .cost();
        // Room for three such events, though the count allows a thousand.
        let hub = Hub::bounded(Vec::new(), 0, false, 1_000, 3 * one);
        for _ in 0..5 {
            publish_one(&hub, &data);
        }
        // 1.0 and 2.0 were dropped: a client that saw 2.0 misses nothing.
        let sub = hub.subscribe(Some("2.0".parse().unwrap()));
        assert_eq!(ids(&sub.backlog), ["3.0", "4.0", "5.0"]);
        assert!(!sub.resync);
        let sub = hub.subscribe(Some("3.0".parse().unwrap()));
        assert_eq!(ids(&sub.backlog), ["4.0", "5.0"]);
        assert!(!sub.resync);
        // A client that saw only 1.0 missed 2.0: it must reload.
        let sub = hub.subscribe(Some("1.0".parse().unwrap()));
        assert!(sub.resync);
        let page = hub.page("1.0".parse().unwrap(), 2);
        assert!(page.resync);
        assert_eq!(ids(&page.events), ["3.0", "4.0"]);
        assert!(page.live.is_none());
        let page = hub.page("4.0".parse().unwrap(), 2);
        assert_eq!(ids(&page.events), ["5.0"]);
        assert!(page.live.is_some());
    }

    #[test]
    fn a_restarted_log_is_bounded_in_bytes_too() {
        let data: Arc<str> = "y".repeat(200).into();
        let replayed: Vec<Published> = (1..=4)
            .rev()
            .map(|g| Published {
                id: EventId { g, k: 0 },
                kind: "move",
                data: Arc::clone(&data),
            })
            .collect();
        let one = Logged::of(&replayed[0]).cost();
        let hub = Hub::bounded(replayed, 4, false, 1_000, 2 * one);
        assert_eq!(hub.last_id(), Some(EventId { g: 4, k: 0 }));
        let sub = hub.subscribe(Some("2.0".parse().unwrap()));
        assert_eq!(ids(&sub.backlog), ["3.0", "4.0"]);
        assert!(!sub.resync);
        assert!(hub.subscribe(Some("1.0".parse().unwrap())).resync);
    }

    #[test]
    fn the_load_probe_forgets_the_lines_an_ordered_reader_passed() {
        let hub = Hub::new(Vec::new(), 0, true);
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_millis(5);
        let a = hub.reserve(t0);
        let b = hub.reserve(t1);
        assert_eq!(hub.entered_in_order(a.g()), Some(t0));
        assert_eq!(hub.entered_in_order(b.g()), Some(t1));
        // The line's other events still find it; the line before is gone.
        assert_eq!(hub.entered_in_order(b.g()), Some(t1));
        assert_eq!(hub.entered(a.g()), None);
    }

    #[test]
    fn ids_parse() {
        assert_eq!("12.3".parse(), Ok(EventId { g: 12, k: 3 }));
        assert_eq!("12".parse(), Ok(EventId { g: 12, k: 0 }));
        assert!("x.1".parse::<EventId>().is_err());
        assert!("".parse::<EventId>().is_err());
    }
}
