//! A slotrelay QUIC ingress client on quinn + rustls (an independent QUIC stack: the relay runs quiche), written
//! from docs/quic-ingress.md alone, for the interop test test/integration/ingress/quic-ingress-quinn.test.ts.
//! - one connection, TLS 1.3, ALPN given by --alpn (slotrelay/1 or solana-tpu), server certificate not verified,
//!   SNI "<ip>.<port>.sol" (rustls refuses a bare IP), the client certificate given (CN = API key, or an Ed25519
//!   identity listed in a key's quicIdentities);
//! - every --uni transaction on its own uni stream: the wire bytes + FIN, then wait until the relay acknowledged all of
//!   it; a STOP_SENDING from the relay ends the write with Stopped(code) and is reported;
//! - then every --bidi transaction on its own bidi stream: the MessagePack map {transaction: bin[, routes][, maxRetries]}
//!   + FIN, then the answer read to FIN and decoded (MessagePack by hand: no rmp crate in Debian's registry);
//! - at most --concurrency streams in flight (default 128, the relay's default MAX_STREAMS); quinn's open_uni/open_bi
//!   also wait for the relay's stream credit, so the limit the relay grants is respected whatever the flag says.
//! Input files: length-prefixed wire transactions, each `u32 little-endian length || bytes`.
//! Output (stdout, one line each):
//!   CONNECTED alpn=<alpn>
//!   STOPPED <uni index> code=<application code>                      (a uni stream the relay stopped)
//!   ANSWER <bidi index> accepted=true signature=<base58> routes=<a,b>
//!   ANSWER <bidi index> accepted=false code=<JSON-RPC code> reason=<registry reason>
//!   STREAM_ERROR <uni|bidi> <index> <error>                           (reset stream, lost connection, bad answer)
//!   DONE uni_sent=<n> uni_stopped=<n> bidi_accepted=<n> bidi_refused=<n> errors=<n> uni_ms=<n> bidi_ms=<n>
//! Exit code 0 when errors=0 (a stopped uni stream or a refused bidi answer is a verdict, not a transport error),
//! 1 on any transport or decoding error, 2 on bad arguments or a failed connection.
//! Usage: quinn-ingress-client <relay ip:port> <cert.der> <key.der (pkcs8)> [--alpn A] [--uni FILE] [--bidi FILE]
//!        [--concurrency N] [--routes a,b|default] [--max-retries N]
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Semaphore;

/// Solana TPU clients do not verify the server (docs/quic-ingress.md "Listener"); the TLS 1.3 handshake signature
/// is still checked against the certificate's key by rustls' default verify_tls13_signature.
struct SkipServerVerification;
impl rustls::client::ServerCertVerifier for SkipServerVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::Certificate,
        _intermediates: &[rustls::Certificate],
        _server_name: &rustls::ServerName,
        _scts: &mut dyn Iterator<Item = &[u8]>,
        _ocsp: &[u8],
        _now: SystemTime,
    ) -> Result<rustls::client::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::ServerCertVerified::assertion())
    }
}

static UNI_SENT: AtomicU64 = AtomicU64::new(0);
static UNI_STOPPED: AtomicU64 = AtomicU64::new(0);
static BIDI_ACCEPTED: AtomicU64 = AtomicU64::new(0);
static BIDI_REFUSED: AtomicU64 = AtomicU64::new(0);
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// The largest answer we read: a refusal's map with its message and data is far below this.
const MAX_ANSWER: usize = 64 * 1024;

fn read_transactions(path: &str) -> std::io::Result<Vec<Vec<u8>>> {
    let b = std::fs::read(path)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let n = u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize;
        i += 4;
        if i + n > b.len() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "truncated record"));
        }
        out.push(b[i..i + n].to_vec());
        i += n;
    }
    if i != b.len() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "trailing bytes"));
    }
    Ok(out)
}

// ---- MessagePack, the subset the contract uses (plain maps, string keys, no extension types) ----

fn put_str(out: &mut Vec<u8>, s: &str) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if n < 256 {
        out.extend_from_slice(&[0xd9, n as u8]);
    } else {
        out.push(0xda);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

fn put_bin(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if n < 256 {
        out.extend_from_slice(&[0xc4, n as u8]);
    } else if n < 65_536 {
        out.push(0xc5);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(b);
}

fn put_uint(out: &mut Vec<u8>, v: u64) {
    if v < 128 {
        out.push(v as u8);
    } else if v <= u32::MAX as u64 {
        out.push(0xce);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

enum Routes {
    Absent,
    Default,
    List(Vec<String>),
}

/// The bidi request: {transaction: bin[, routes: [str] | "default"][, maxRetries: uint]}.
fn encode_request(tx: &[u8], routes: &Routes, max_retries: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(tx.len() + 64);
    let n = 1 + !matches!(routes, Routes::Absent) as u8 + max_retries.is_some() as u8;
    out.push(0x80 | n);
    put_str(&mut out, "transaction");
    put_bin(&mut out, tx);
    match routes {
        Routes::Absent => {}
        Routes::Default => {
            put_str(&mut out, "routes");
            put_str(&mut out, "default");
        }
        Routes::List(list) => {
            put_str(&mut out, "routes");
            out.push(0x90 | list.len() as u8);
            for r in list {
                put_str(&mut out, r);
            }
        }
    }
    if let Some(m) = max_retries {
        put_str(&mut out, "maxRetries");
        put_uint(&mut out, m);
    }
    out
}

/// A decoded MessagePack value (every field is printed in error lines through Debug).
#[allow(dead_code)]
#[derive(Debug)]
enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(kv) => kv.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let s = self.b.get(self.i..self.i + n).ok_or("truncated MessagePack")?;
        self.i += n;
        Ok(s)
    }
    fn be(&mut self, n: usize) -> Result<u64, String> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &x| (a << 8) | x as u64))
    }
    fn str(&mut self, n: usize) -> Result<Value, String> {
        Ok(Value::Str(String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "invalid UTF-8 in str")?))
    }
    fn array(&mut self, n: usize) -> Result<Value, String> {
        (0..n).map(|_| self.value()).collect::<Result<Vec<_>, _>>().map(Value::Array)
    }
    fn map(&mut self, n: usize) -> Result<Value, String> {
        (0..n).map(|_| Ok((self.value()?, self.value()?))).collect::<Result<Vec<_>, String>>().map(Value::Map)
    }
    fn value(&mut self) -> Result<Value, String> {
        let t = self.take(1)?[0];
        match t {
            0x00..=0x7f => Ok(Value::Int(t as i64)),
            0x80..=0x8f => self.map((t & 0x0f) as usize),
            0x90..=0x9f => self.array((t & 0x0f) as usize),
            0xa0..=0xbf => self.str((t & 0x1f) as usize),
            0xc0 => Ok(Value::Nil),
            0xc2 => Ok(Value::Bool(false)),
            0xc3 => Ok(Value::Bool(true)),
            0xc4 | 0xc5 | 0xc6 => {
                let n = self.be(1 << (t - 0xc4))? as usize;
                Ok(Value::Bin(self.take(n)?.to_vec()))
            }
            0xca => Ok(Value::Float(f32::from_bits(self.be(4)? as u32) as f64)),
            0xcb => Ok(Value::Float(f64::from_bits(self.be(8)?))),
            0xcc..=0xcf => Ok(Value::Int(self.be(1 << (t - 0xcc))? as i64)),
            0xd0 => Ok(Value::Int(self.be(1)? as u8 as i8 as i64)),
            0xd1 => Ok(Value::Int(self.be(2)? as u16 as i16 as i64)),
            0xd2 => Ok(Value::Int(self.be(4)? as u32 as i32 as i64)),
            0xd3 => Ok(Value::Int(self.be(8)? as i64)),
            0xd9 | 0xda | 0xdb => {
                let n = self.be(1 << (t - 0xd9))? as usize;
                self.str(n)
            }
            0xdc | 0xdd => {
                let n = self.be(2 << (t - 0xdc))? as usize;
                self.array(n)
            }
            0xde | 0xdf => {
                let n = self.be(2 << (t - 0xde))? as usize;
                self.map(n)
            }
            0xe0..=0xff => Ok(Value::Int(t as i8 as i64)),
            _ => Err(format!("unsupported MessagePack type 0x{t:02x}")),
        }
    }
}

/// One answer map -> the ANSWER line's tail, and whether it was accepted.
fn describe_answer(bytes: &[u8]) -> Result<(bool, String), String> {
    let mut r = Reader { b: bytes, i: 0 };
    let v = r.value()?;
    if r.i != bytes.len() {
        return Err("bytes after the answer map".into());
    }
    match v.get("accepted") {
        Some(Value::Bool(true)) => {
            let sig = match v.get("signature") {
                Some(Value::Str(s)) => s.clone(),
                other => return Err(format!("accepted without a signature string: {other:?}")),
            };
            let routes = match v.get("routes") {
                Some(Value::Array(a)) => a.iter().map(|x| if let Value::Str(s) = x { s.as_str() } else { "?" }).collect::<Vec<_>>().join(","),
                _ => String::new(),
            };
            Ok((true, format!("accepted=true signature={sig} routes={routes}")))
        }
        Some(Value::Bool(false)) => {
            let e = v.get("error").ok_or("refused without an error map")?;
            let code = match e.get("code") {
                Some(Value::Int(c)) => *c,
                other => return Err(format!("error without an int code: {other:?}")),
            };
            let reason = match e.get("reason") {
                Some(Value::Str(s)) => s.clone(),
                _ => String::new(),
            };
            Ok((false, format!("accepted=false code={code} reason={reason}")))
        }
        _ => Err(format!("no accepted bool in {v:?}")),
    }
}

fn error(kind: &str, index: usize, e: impl std::fmt::Display) {
    ERRORS.fetch_add(1, Relaxed);
    println!("STREAM_ERROR {kind} {index} {e}");
}

async fn send_uni(conn: quinn::Connection, index: usize, tx: Vec<u8>) {
    let mut s = match conn.open_uni().await {
        Ok(s) => s,
        Err(e) => return error("uni", index, e),
    };
    // write_all then finish before the connection task runs: bytes and FIN normally leave in one STREAM frame.
    let r = match s.write_all(&tx).await {
        Ok(()) => s.finish().await, // resolves once the relay acknowledged every byte and the FIN
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => {
            UNI_SENT.fetch_add(1, Relaxed);
        }
        Err(quinn::WriteError::Stopped(code)) => {
            UNI_STOPPED.fetch_add(1, Relaxed);
            println!("STOPPED {index} code={code}");
        }
        Err(e) => error("uni", index, e),
    }
}

async fn send_bidi(conn: quinn::Connection, index: usize, request: Vec<u8>) {
    let (mut send, recv) = match conn.open_bi().await {
        Ok(s) => s,
        Err(e) => return error("bidi", index, e),
    };
    if let Err(e) = send.write_all(&request).await {
        return error("bidi", index, e);
    }
    // The relay answers only after the FIN; a STOP_SENDING (code 17, too large) ends this with Stopped.
    if let Err(e) = send.finish().await {
        return error("bidi", index, e);
    }
    let answer = match recv.read_to_end(MAX_ANSWER).await {
        Ok(a) => a,
        Err(e) => return error("bidi", index, e),
    };
    match describe_answer(&answer) {
        Ok((accepted, line)) => {
            if accepted {
                BIDI_ACCEPTED.fetch_add(1, Relaxed);
            } else {
                BIDI_REFUSED.fetch_add(1, Relaxed);
            }
            println!("ANSWER {index} {line}");
        }
        Err(e) => error("bidi", index, e),
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: quinn-ingress-client <relay ip:port> <cert.der> <key.der> [--alpn A] [--uni FILE] [--bidi FILE] [--concurrency N] [--routes a,b|default] [--max-retries N]");
    std::process::exit(2);
}

#[tokio::main]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    let flag = |name: &str| a.iter().position(|x| x == name).and_then(|i| a.get(i + 1)).cloned();
    if a.len() < 4 {
        usage("missing arguments");
    }
    let addr: SocketAddr = a[1].parse().unwrap_or_else(|_| usage("the relay address must be ip:port"));
    let cert = rustls::Certificate(std::fs::read(&a[2]).unwrap_or_else(|e| usage(&format!("{}: {e}", a[2]))));
    let key = rustls::PrivateKey(std::fs::read(&a[3]).unwrap_or_else(|e| usage(&format!("{}: {e}", a[3]))));
    let alpn = flag("--alpn").unwrap_or_else(|| "slotrelay/1".into());
    let load = |f: Option<String>| f.map(|p| read_transactions(&p).unwrap_or_else(|e| usage(&format!("{p}: {e}")))).unwrap_or_default();
    let uni = load(flag("--uni"));
    let bidi = load(flag("--bidi"));
    let concurrency: usize = flag("--concurrency").map(|c| c.parse().unwrap_or_else(|_| usage("bad --concurrency"))).unwrap_or(128);
    let routes = match flag("--routes").as_deref() {
        None => Routes::Absent,
        Some("default") => Routes::Default,
        Some(list) => Routes::List(list.split(',').map(String::from).collect()),
    };
    let max_retries: Option<u64> = flag("--max-retries").map(|m| m.parse().unwrap_or_else(|_| usage("bad --max-retries")));

    let mut tls = rustls::ClientConfig::builder()
        .with_safe_default_cipher_suites()
        .with_safe_default_kx_groups()
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_custom_certificate_verifier(Arc::new(SkipServerVerification))
        .with_single_cert(vec![cert], key)
        .unwrap_or_else(|e| usage(&format!("client certificate/key: {e}")));
    tls.alpn_protocols = vec![alpn.as_bytes().to_vec()];
    let mut config = quinn::ClientConfig::new(Arc::new(tls));
    let mut transport = quinn::TransportConfig::default();
    // Below the relay's 30 s idle timeout (docs/quic-ingress.md checklist, step 3).
    transport.keep_alive_interval(Some(Duration::from_secs(5)));
    transport.max_idle_timeout(Some(Duration::from_secs(30).try_into().unwrap()));
    config.transport_config(Arc::new(transport));

    let bind: SocketAddr = if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().unwrap();
    let endpoint = quinn::Endpoint::client(bind).unwrap_or_else(|e| usage(&format!("bind: {e}")));
    let server_name = format!("{}.{}.sol", addr.ip(), addr.port());
    let conn = match endpoint.connect_with(config, addr, &server_name) {
        Ok(c) => match c.await {
            Ok(c) => c,
            Err(e) => {
                println!("CONNECT_FAILED {e}");
                std::process::exit(2);
            }
        },
        Err(e) => {
            println!("CONNECT_FAILED {e}");
            std::process::exit(2);
        }
    };
    let negotiated = conn
        .handshake_data()
        .and_then(|h| h.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|h| h.protocol)
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .unwrap_or_default();
    println!("CONNECTED alpn={negotiated}");

    let permits = Arc::new(Semaphore::new(concurrency.max(1)));
    let t0 = Instant::now();
    let mut tasks = Vec::with_capacity(uni.len());
    for (i, tx) in uni.into_iter().enumerate() {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let conn = conn.clone();
        tasks.push(tokio::spawn(async move {
            send_uni(conn, i, tx).await;
            drop(permit);
        }));
    }
    for t in tasks.drain(..) {
        t.await.unwrap();
    }
    let uni_ms = t0.elapsed().as_millis();

    let t1 = Instant::now();
    for (i, tx) in bidi.into_iter().enumerate() {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let conn = conn.clone();
        let request = encode_request(&tx, &routes, max_retries);
        tasks.push(tokio::spawn(async move {
            send_bidi(conn, i, request).await;
            drop(permit);
        }));
    }
    for t in tasks.drain(..) {
        t.await.unwrap();
    }
    let bidi_ms = t1.elapsed().as_millis();

    if let Some(reason) = conn.close_reason() {
        error("connection", 0, reason);
    }
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    println!(
        "DONE uni_sent={} uni_stopped={} bidi_accepted={} bidi_refused={} errors={} uni_ms={uni_ms} bidi_ms={bidi_ms}",
        UNI_SENT.load(Relaxed),
        UNI_STOPPED.load(Relaxed),
        BIDI_ACCEPTED.load(Relaxed),
        BIDI_REFUSED.load(Relaxed),
        ERRORS.load(Relaxed)
    );
    std::process::exit(if ERRORS.load(Relaxed) == 0 { 0 } else { 1 });
}
