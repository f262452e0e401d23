"""The system loggers as people run them, shipping a file to Limelight's Elasticsearch
bulk API: rsyslog's ``omelasticsearch`` (Debian's rsyslog-elasticsearch) and syslog-ng's
``elasticsearch-http()`` destination (its http module), configured with the address and
the key alone. Each runs in the foreground with a configuration of its own, reads a
file of lines and is stopped once its events are read back."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.shipper_support import need_tool, wait_for_events
from tests.support import LiveServer, Tenant

OMELASTICSEARCH = Path("/usr/lib/x86_64-linux-gnu/rsyslog/omelasticsearch.so")
# Debian's syslog-ng and rsyslog conflict (both are the system logger): .ci/run unpacks
# syslog-ng's packages here.
SYSLOG_NG_ROOT = Path(os.environ.get("LIMELIGHT_TEST_SYSLOG_NG_ROOT", "/opt/syslog-ng"))
LINES = 12


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


@contextmanager
def running(command: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run ``command`` until the test is done; its output goes to ``log``."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def log_file(folder: Path, name: str) -> tuple[Path, float]:
    """A file of ``LINES`` lines to ship, and when it was written."""
    path = folder / f"{name}.log"
    path.write_text("".join(f"{name} request {i} took {10 * i} ms\n" for i in range(LINES)))
    return path, time.time()


def check_shipped(events: list[dict[str, object]], name: str, dataset: str, since: float) -> None:
    """Every line arrived once, in its dataset, with the time it was read."""
    assert len(events) == LINES, events[:3]
    texts = sorted(str(e.get("message", e.get("MESSAGE"))) for e in events)
    assert texts == sorted(f"{name} request {i} took {10 * i} ms" for i in range(LINES))
    for event in events:
        assert event["_dataset"] == dataset
        stamp = event["_timestamp"]
        assert isinstance(stamp, int)
        assert since * 1000 - 1000 <= stamp <= time.time() * 1000 + 1000


def test_rsyslog_omelasticsearch_ships_a_file(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    rsyslogd = need_tool("rsyslogd", "apt-get install rsyslog rsyslog-elasticsearch")
    if not OMELASTICSEARCH.exists():
        need_tool("omelasticsearch", "apt-get install rsyslog-elasticsearch")
    path, written = log_file(tmp_path, "rsyslog")
    (tmp_path / "work").mkdir()
    config = tmp_path / "rsyslog.conf"
    config.write_text(f"""
global(workDirectory="{tmp_path / "work"}")
module(load="imfile")
module(load="omelasticsearch")
template(name="doc" type="list" option.jsonf="on") {{
  property(outname="@timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="message" name="msg" format="jsonf")
  property(outname="host" name="hostname" format="jsonf")
  property(outname="program" name="programname" format="jsonf")
}}
ruleset(name="ship") {{
  action(type="omelasticsearch" server="{server.url}/es" searchIndex="rsyslog-app"
         template="doc" bulkmode="on" uid="rsyslog" pwd="{tenant.ingest_key}"
         errorfile="{tmp_path / "errors.json"}")
}}
input(type="imfile" File="{path}" Tag="billing:" ruleset="ship")
""")
    command = [rsyslogd, "-n", "-f", str(config), "-i", str(tmp_path / "rsyslogd.pid")]
    with running(command, tmp_path / "rsyslogd.out"):
        events = wait_for_events(server, tenant, "rsyslog-app", LINES)
    check_shipped(events, "rsyslog", "rsyslog-app", written)
    assert {e["program"] for e in events} == {"billing"}
    assert not (tmp_path / "errors.json").exists()


def syslog_ng() -> tuple[str, Path, dict[str, str]]:
    """syslog-ng, the folder of its configuration library and its environment."""
    unpacked = SYSLOG_NG_ROOT / "usr/sbin/syslog-ng"
    if unpacked.exists():
        env = {**os.environ, "LD_LIBRARY_PATH": str(SYSLOG_NG_ROOT / "usr/lib/syslog-ng")}
        return str(unpacked), SYSLOG_NG_ROOT, env
    binary = need_tool("syslog-ng", "apt-get install syslog-ng-core syslog-ng-mod-http")
    return binary, Path("/"), dict(os.environ)


def test_syslog_ng_elasticsearch_http_ships_a_file(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    binary, root, env = syslog_ng()
    modules = next((root / "usr/lib/syslog-ng").glob("3.*"))
    scl = root / "usr/share/syslog-ng/include/scl/elasticsearch/elastic-http.conf"
    path, written = log_file(tmp_path, "syslog-ng")
    config = tmp_path / "syslog-ng.conf"
    config.write_text(f"""@version: {modules.name}
@include "{scl}"
source s_app {{ file("{path}" follow-freq(0.2) flags(no-parse) program-override("billing")); }};
destination d_limelight {{
  elasticsearch-http(
    url("{server.url}/es/_bulk") index("syslog-ng-app") type("")
    user("syslog-ng") password("{tenant.ingest_key}")
    batch-lines(5) batch-timeout(200)
  );
}};
log {{ source(s_app); destination(d_limelight); }};
""")
    command = [
        binary, "-F", "--stderr", "-f", str(config), f"--module-path={modules}",
        "-R", str(tmp_path / "persist"), "-c", str(tmp_path / "ctl"), "-p", str(tmp_path / "pid"),
    ]  # fmt: skip
    with running(command, tmp_path / "syslog-ng.out", env):
        events = wait_for_events(server, tenant, "syslog-ng-app", LINES)
    check_shipped(events, "syslog-ng", "syslog-ng-app", written)
    assert {e["PROGRAM"] for e in events} == {"billing"}
    assert all(e["@timestamp"] == e["ISODATE"] for e in events)
