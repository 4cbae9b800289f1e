//! `eboard ports`: the serial ports of this machine, with what USB says
//! about them, a guess at the board family, and the family that answers
//! when the port is asked ([`super::probe`]).
//!
//! The guess is only a hint for the operator; `--protocol` always decides.
//! In order:
//!
//! 1. the USB product or manufacturer text names the board: `DGT` → dgt;
//!    `Millennium` or `ChessLink` → millennium; `Certabo`, `Sentio` or
//!    `Tabutronic` → certabo (likely);
//! 2. USB vendor id 0x045B, seen on DGT boards → dgt (likely);
//! 3. FTDI 0x0403:0x6001, the bridge of older DGT USB boards → dgt
//!    (possible: countless other devices use it too);
//! 4. Silicon Labs vendor id 0x10C4, the bridge of Certabo boards →
//!    certabo (possible, for the same reason);
//! 5. a Bluetooth serial port → dgt (possible: DGT's Bluetooth boards
//!    speak the serial protocol over RFCOMM).

use std::{io::Write, path::PathBuf};

use serde::Serialize;

use super::Protocol;

/// `eboard ports`.
#[derive(Debug, Clone, clap::Args)]
pub struct PortsArgs {
    /// Also list ports that are neither USB nor Bluetooth (built-in serial
    /// ports, usually not a board).
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object per port (JSON lines).
    #[arg(long)]
    pub json: bool,
}

/// How sure a guess is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The device names the board, or has an id seen on such boards only.
    Likely,
    /// A generic bridge or link that such boards also use.
    Possible,
}

/// A guess at the board family of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Guess {
    /// The family.
    #[serde(serialize_with = "ser_protocol")]
    pub protocol: Protocol,
    /// How sure.
    pub confidence: Confidence,
    pub reason: &'static str,
}

fn ser_protocol<S: serde::Serializer>(p: &Protocol, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.as_str())
}

/// What is known of a port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortReport {
    /// The device path.
    pub port: String,
    /// `usb`, `bluetooth`, `pci` or `unknown`.
    pub kind: &'static str,
    /// A path that stays the same when the device is plugged in again
    /// (Linux `/dev/serial/by-id`), if there is one.
    pub stable_path: Option<String>,
    /// USB vendor id.
    pub vid: Option<u16>,
    /// USB product id.
    pub pid: Option<u16>,
    /// USB manufacturer text.
    pub manufacturer: Option<String>,
    /// USB product text.
    pub product: Option<String>,
    /// USB serial number.
    pub serial_number: Option<String>,
    /// The guess at the family.
    pub guess: Option<Guess>,
    /// Which family answered when asked ([`super::probe::answers`]):
    /// `dgt`, `millennium`, `certabo`, `nothing`, or why the port could not
    /// be asked; `None` until asked.
    pub answers: Option<String>,
}

/// Guesses the family from what USB says (see the module documentation).
pub fn guess(
    kind: &str,
    vid: Option<u16>,
    pid: Option<u16>,
    texts: &[Option<&str>],
) -> Option<Guess> {
    let text = texts
        .iter()
        .flatten()
        .map(|t| t.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
    let has_word = |w: &str| {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|t| t == w)
    };
    let likely = |protocol, reason| {
        Some(Guess {
            protocol,
            confidence: Confidence::Likely,
            reason,
        })
    };
    let possible = |protocol, reason| {
        Some(Guess {
            protocol,
            confidence: Confidence::Possible,
            reason,
        })
    };
    if has_word("dgt") {
        return likely(Protocol::Dgt, "the USB device names DGT");
    }
    if text.contains("millennium") || text.contains("chesslink") {
        return likely(Protocol::Millennium, "the USB device names Millennium");
    }
    if text.contains("certabo") {
        return likely(Protocol::Certabo, "the USB device names Certabo");
    }
    if text.contains("sentio") || text.contains("tabutronic") {
        return likely(
            Protocol::Certabo,
            "the USB device names the Tabutronic Sentio",
        );
    }
    match (vid, pid) {
        (Some(0x045B), _) => likely(Protocol::Dgt, "USB vendor id 045b, seen on DGT boards"),
        (Some(0x0403), Some(0x6001)) => possible(
            Protocol::Dgt,
            "FTDI bridge 0403:6001, used by older DGT USB boards (and by many other devices)",
        ),
        (Some(0x10C4), _) => possible(
            Protocol::Certabo,
            "Silicon Labs bridge 10c4, used by Certabo boards (and by many other devices)",
        ),
        _ if kind == "bluetooth" => possible(
            Protocol::Dgt,
            "Bluetooth serial port; DGT Bluetooth boards speak the serial protocol",
        ),
        _ => None,
    }
}

/// Lists the ports.
pub fn list(all: bool) -> Result<Vec<PortReport>, serialport::Error> {
    let by_id = stable_paths();
    let mut out = Vec::new();
    for info in serialport::available_ports()? {
        let (kind, usb) = match &info.port_type {
            serialport::SerialPortType::UsbPort(u) => ("usb", Some(u)),
            serialport::SerialPortType::BluetoothPort => ("bluetooth", None),
            serialport::SerialPortType::PciPort => ("pci", None),
            serialport::SerialPortType::Unknown => ("unknown", None),
        };
        if !all && usb.is_none() && kind != "bluetooth" {
            continue;
        }
        let canonical = std::fs::canonicalize(&info.port_name).ok();
        let stable_path = by_id
            .iter()
            .find(|(_, target)| Some(target) == canonical.as_ref())
            .map(|(link, _)| link.display().to_string());
        let (vid, pid) = (usb.map(|u| u.vid), usb.map(|u| u.pid));
        let manufacturer = usb.and_then(|u| u.manufacturer.clone());
        let product = usb.and_then(|u| u.product.clone());
        let guess = guess(
            kind,
            vid,
            pid,
            &[manufacturer.as_deref(), product.as_deref()],
        );
        out.push(PortReport {
            port: info.port_name.clone(),
            kind,
            stable_path,
            vid,
            pid,
            manufacturer,
            product,
            serial_number: usb.and_then(|u| u.serial_number.clone()),
            guess,
            answers: None,
        });
    }
    out.sort_by(|a, b| a.port.cmp(&b.port));
    Ok(out)
}

/// `/dev/serial/by-id` links and the devices they point to (Linux; empty
/// elsewhere).
fn stable_paths() -> Vec<(PathBuf, PathBuf)> {
    let Ok(dir) = std::fs::read_dir("/dev/serial/by-id") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let link = e.path();
            let target = std::fs::canonicalize(&link).ok()?;
            Some((link, target))
        })
        .collect()
}

/// Why `eboard ports` failed.
#[derive(Debug, thiserror::Error)]
pub enum PortsError {
    /// The system would not list its ports.
    #[error("cannot list the serial ports: {0}")]
    List(#[from] serialport::Error),
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Write(#[from] std::io::Error),
}

/// Runs `eboard ports`.
pub fn run(args: &PortsArgs, out: &mut dyn Write) -> Result<(), PortsError> {
    let mut ports = list(args.all)?;
    for p in &mut ports {
        p.answers = Some(super::probe::answers(&p.port));
    }
    if args.json {
        for p in &ports {
            let line = serde_json::to_string(p).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    if ports.is_empty() {
        writeln!(
            out,
            "no USB or Bluetooth serial port found (is the board plugged in and switched on? --all lists every port)"
        )?;
        return Ok(());
    }
    for p in &ports {
        write!(out, "{}  {}", p.port, p.kind)?;
        if let (Some(vid), Some(pid)) = (p.vid, p.pid) {
            write!(out, " {vid:04x}:{pid:04x}")?;
        }
        for text in [&p.manufacturer, &p.product].into_iter().flatten() {
            write!(out, "  {text}")?;
        }
        if let Some(s) = &p.serial_number {
            write!(out, "  serial {s}")?;
        }
        writeln!(out)?;
        if let Some(s) = &p.stable_path {
            writeln!(out, "    stable path: {s}")?;
        }
        match &p.guess {
            Some(g) => writeln!(
                out,
                "    guess: --protocol {} ({}: {})",
                g.protocol,
                match g.confidence {
                    Confidence::Likely => "likely",
                    Confidence::Possible => "possible",
                },
                g.reason
            )?,
            None => writeln!(out, "    guess: none")?,
        }
        if let Some(a) = &p.answers {
            writeln!(out, "    answers: {a}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses() {
        let g = |kind, vid, pid, texts: &[Option<&str>]| {
            guess(kind, vid, pid, texts).map(|g| (g.protocol, g.confidence))
        };
        assert_eq!(
            g("usb", Some(0x045B), Some(0x81E3), &[None, None]),
            Some((Protocol::Dgt, Confidence::Likely))
        );
        assert_eq!(
            g(
                "usb",
                Some(0x1234),
                Some(1),
                &[Some("Digital Game Technology"), Some("DGT Board")]
            ),
            Some((Protocol::Dgt, Confidence::Likely))
        );
        // "dgt" must be a word, not part of one.
        assert_eq!(g("usb", Some(0x1234), Some(1), &[Some("Budgtech")]), None);
        assert_eq!(
            g(
                "usb",
                Some(0x0403),
                Some(0x6001),
                &[Some("FTDI"), Some("MILLENNIUM CHESS")]
            ),
            Some((Protocol::Millennium, Confidence::Likely))
        );
        assert_eq!(
            g("usb", Some(0x0403), Some(0x6001), &[Some("FTDI"), None]),
            Some((Protocol::Dgt, Confidence::Possible))
        );
        assert_eq!(
            g(
                "usb",
                Some(0x10C4),
                Some(0xEA60),
                &[None, Some("CP2102 USB to UART")]
            ),
            Some((Protocol::Certabo, Confidence::Possible))
        );
        assert_eq!(
            g(
                "usb",
                Some(0x2341),
                Some(0x0043),
                &[Some("Tabutronic"), None]
            ),
            Some((Protocol::Certabo, Confidence::Likely))
        );
        assert_eq!(
            g("bluetooth", None, None, &[]),
            Some((Protocol::Dgt, Confidence::Possible))
        );
        assert_eq!(g("pci", None, None, &[]), None);
    }
}
