"""A Flink cluster of hosts that share nothing but the network: the recipe of docs/scale-out.md#a-cluster, run.

Each host is a network namespace of its own (``ip netns add``), joined to the others by a veth pair into a bridge
this test creates, with an address this test assigns from a private /24 and no other route: traffic goes only
between these hosts, nothing leaves the machine. Each host's processes run in a mount namespace of its own, with
its work folder bind-mounted back over a fresh tmpfs on ``/tmp`` (and ``/dev/shm``): no host reads another's
local disk (the machine's own files, the JDK, Maven's jars and the test venv's site-packages, are each host's
"operating system", read by all).

- ``s3``: an S3-compatible object store, s3proxy 2.6.0 (tools/s3proxy.sh) with its filesystem backend; the
  Quickstart's inputs are put there, and the build writes there.
- ``jm``: Flink 1.19.0's JobManager (tools/flink-jobmanager.sh --bind its address; fixed ports: RPC 6123, blob
  6124, REST 8081).
- ``tm1``, ``tm2``: a TaskManager each (tools/flink-taskmanager.sh: RPC 6122, data 6121, 2 slots), pointed at the
  JobManager's address, and an SDK worker pool (``EXTERNAL``, ``localhost:50000``, its workers started by
  ``incoherent-sdk-worker``) from a venv made on that host from the project's wheel.
- ``driver``: runs ``incoherent build`` (with Beam's Flink job server, which it starts) against the JobManager's
  REST address, every input and output on ``s3://``.

The build's Parquet files must be byte-identical to the local build of the Quickstart; then the build's
``intruders`` stage runs again and the whole ``tm1`` host (every process in its namespace) is killed in the
middle of it: Flink reruns the job on ``tm2`` and the files are again identical.

Namespaces, the bridge and the veths are named ``inch-<pid in hex>-...``: ones whose test process is gone (a test
killed halfway) are deleted when this module starts; its own are deleted on every way out.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import ROOT
from tests.e2e.test_flink import JAR, job_server_home
from tests.e2e.test_output_hashes import HASHES

HOME = job_server_home()
S3PROXY_VERSION = "2.6.0"
S3PROXY = (
    Path(
        os.environ.get(
            "INCOHERENT_S3PROXY_HOME", Path.home() / ".cache" / "incoherent" / f"s3proxy-{S3PROXY_VERSION}"
        )
    )
    / f"s3proxy-{S3PROXY_VERSION}-jar-with-dependencies.jar"
)
TOOLS = ("ip", "unshare", "nsenter", "java")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(HOME is None, reason="Beam's Flink job server not fetched: tools/flink-job-server.sh"),
    pytest.mark.skipif(not S3PROXY.is_file(), reason="s3proxy not fetched: tools/s3proxy.sh"),
    # five hosts, a wheel installed on two of them and the whole build twice: about 15 min on 2 cores, so it runs
    # where it is asked for (.ci/run's e2e step sets INCOHERENT_HOSTS_TEST=1), not in every e2e run
    pytest.mark.skipif(
        os.environ.get("INCOHERENT_HOSTS_TEST") != "1",
        reason="the multi-host test runs with INCOHERENT_HOSTS_TEST=1",
    ),
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and mounts need root"),
    pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS), reason=f"needs {', '.join(TOOLS)}"),
]

PREFIX = "inch"
TAG = f"{os.getpid():x}"
ROLES = ("driver", "s3", "jm", "tm1", "tm2")
SHORT = {"driver": "drv", "s3": "s3", "jm": "jm", "tm1": "tm1", "tm2": "tm2"}
BUCKET = "incoherent"
KEYS = [
    "--s3_access_key_id=incoherent",
    "--s3_secret_access_key=incoherent-secret",
    "--s3_region_name=us-east-1",
]
POOL_PORT = 50000
# boto3 (1.36 and later) sends a checksum trailer with each upload (aws-chunked), which s3proxy 2.6.0 answers
# with 501 NotImplemented, and Beam's S3 filesystem retries that for minutes: a checksum only where S3 needs one
S3_CLIENT = {
    "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
    "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required",
}
# every process of a host: its own mount namespace, its work folder at the same path over a fresh /tmp, and the
# machine's own files that happen to live under /tmp (a checkout or venv there: the test's "operating system")
# mounted back beside it
MOUNTS = r"""
set -euo pipefail
mount --make-rprivate /
mount -t tmpfs tmpfs /mnt
n=0
for path in "$@"; do n=$((n + 1)); mkdir /mnt/$n; mount --bind "$path" /mnt/$n; done
mount -t tmpfs -o size=4g tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
n=0
for path in "$@"; do n=$((n + 1)); mkdir -p "$path"; mount --move /mnt/$n "$path"; done
echo ready
exec sleep 86400
"""


def system_under_tmp() -> list[Path]:
    """The checkout, the venv, the Python and the fetched jars where they lie under /tmp (a clone made there):
    every host reads them as a machine's installed files, so the fresh /tmp must not hide them."""
    paths = {ROOT, Path(sys.prefix), Path(sys.base_prefix), S3PROXY.parent}
    if HOME is not None:
        paths.add(Path(HOME))
    under = sorted(p.resolve() for p in paths if p.resolve().is_relative_to("/tmp"))
    return [p for p in under if not any(p != q and p.is_relative_to(q) for q in under)]


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=60, check=check)


def netns_pids(ns: str) -> list[int]:
    done = ip("netns", "pids", ns, check=False)
    return [int(p) for p in done.stdout.split()]


def kill_namespace(ns: str) -> None:
    """SIGKILL every process in the network namespace ``ns`` until none is left (what a host's power cut does)."""
    deadline = time.monotonic() + 30
    while (pids := netns_pids(ns)) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        psutil.wait_procs([p for p in map(_process, pids) if p], timeout=5)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def delete_network(tag: str) -> None:
    """The namespaces (and their processes), veths and bridge of the run whose tag is ``tag``."""
    for line in ip("netns", "list").stdout.splitlines():
        ns = line.split()[0] if line.split() else ""
        if ns.startswith(f"{PREFIX}-{tag}-"):
            kill_namespace(ns)
            ip("netns", "del", ns, check=False)  # its veth end goes with it, and so does the peer
    for line in ip("-o", "link", "show").stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(f"{PREFIX}{tag}"):
            ip("link", "del", name, check=False)


def delete_stale() -> None:
    """What earlier runs of this module left behind (a test killed halfway): their test process is gone."""
    tags = set()
    for line in ip("netns", "list").stdout.splitlines():
        parts = line.split()[0].split("-") if line.split() else []
        if len(parts) >= 3 and parts[0] == PREFIX:
            tags.add(parts[1])
    for line in ip("-o", "link", "show", "type", "bridge").stdout.splitlines():
        name = line.split(":")[1].strip()
        if name.startswith(PREFIX) and name.endswith("br"):
            tags.add(name[len(PREFIX) : -2])
    for tag in tags:
        try:
            alive = psutil.pid_exists(int(tag, 16))
        except ValueError:
            continue
        if not alive:
            delete_network(tag)


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.213.0.0/16 that no address or route of this machine overlaps."""
    used = []
    for line in ip("-4", "-o", "addr").stdout.splitlines() + ip("-4", "route").stdout.splitlines():
        for word in line.split():
            try:
                used.append(ipaddress.ip_network(word, strict=False))
            except ValueError:
                pass
    for n in range(256):
        candidate = ipaddress.ip_network(f"10.213.{(os.getpid() + n) % 256}.0/24")
        if not any(candidate.overlaps(u) for u in used if u.prefixlen > 0):
            return candidate
    raise RuntimeError("no free /24 in 10.213.0.0/16")


class Host:
    """A network namespace with an address on the bridge, and a process holding its mount namespace."""

    def __init__(self, role: str, address: str, folder: Path, bridge: str, prefix: int):
        self.role, self.address, self.folder = role, address, folder
        self.ns = f"{PREFIX}-{TAG}-{SHORT[role]}"
        outside, inside = f"{PREFIX}{TAG}{SHORT[role]}", f"{PREFIX}{TAG}{SHORT[role]}p"
        folder.mkdir(parents=True)
        ip("netns", "add", self.ns)
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", self.ns)
        ip("-n", self.ns, "link", "set", inside, "name", "eth0")
        ip("-n", self.ns, "addr", "add", f"{address}/{prefix}", "dev", "eth0")
        ip("-n", self.ns, "link", "set", "eth0", "up")
        ip("-n", self.ns, "link", "set", "lo", "up")
        ip("link", "set", outside, "master", bridge, "up")
        self.holder = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "unshare", "--mount", "--propagation", "private",
             "bash", "-c", MOUNTS, "mounts", str(folder), *map(str, system_under_tmp())],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        line = self.holder.stdout.readline()  # the event: its mounts are in place
        assert line.strip() == "ready", self.holder.stderr.read()

    def command(self, args: list[str], cwd: Path | None = None) -> list[str]:
        enter = ["nsenter", "-t", str(self.holder.pid), "-m", "-n", f"--wd={cwd or self.folder}", "--"]
        return enter + [str(a) for a in args]

    def start(self, name: str, args: list[str], env: dict) -> subprocess.Popen:
        """A process of this host in the background; its output in FOLDER/NAME.log."""
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 (the process keeps it)
        return subprocess.Popen(self.command(args), stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip

    def run(self, args: list[str], env: dict, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(args), env=env, capture_output=True, text=True, timeout=timeout, **kw
        )


def host_env(host: Host, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TMPDIR")}
    env.update(TMPDIR=str(host.folder / "tmp"), HOME=str(host.folder), **S3_CLIENT, **extra)
    (host.folder / "tmp").mkdir(exist_ok=True)
    return env


def wait_until(check, what: str, seconds: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            tails = "\n".join(f"== {p}\n{p.read_text(errors='replace')[-2000:]}" for p in logs if p.exists())
            raise AssertionError(f"{what}: not within {seconds} s\n{tails}")
        time.sleep(1)


class Cluster:
    def __init__(self, root: Path, wheel: Path):
        self.root = root
        subnet = free_subnet()
        self.bridge = f"{PREFIX}{TAG}br"
        ip("link", "add", self.bridge, "type", "bridge")
        ip("link", "set", self.bridge, "up")
        addresses = list(subnet.hosts())
        self.hosts = {role: Host(role, str(addresses[i + 1]), root / role, self.bridge, subnet.prefixlen)
                      for i, role in enumerate(ROLES)}  # fmt: skip
        self.processes: list[subprocess.Popen] = []
        s3, jm = self.hosts["s3"], self.hosts["jm"]
        self.endpoint = f"http://{s3.address}:9000"
        self.master = f"{jm.address}:8081"
        # the worker hosts have no AWS configuration of their own: Beam's S3 filesystem and incoherent's own S3
        # checks there (its inputs' description) take the build's --s3_* options, which incoherent-sdk-worker
        # gets from the runner (until 2026-11-29 the checks read the driver's only, and needed AWS_* here)
        # the object store: s3proxy's filesystem-nio2 backend, a bucket a folder of it (its older "filesystem"
        # backend lists folders as objects without an ETag, on which Beam's S3 filesystem fails)
        self.store = s3.folder / "store"
        (self.store / BUCKET).mkdir(parents=True)
        (s3.folder / "s3proxy.conf").write_text(
            f"s3proxy.endpoint={self.endpoint}\ns3proxy.authorization=aws-v2-or-v4\n"
            "s3proxy.identity=incoherent\ns3proxy.credential=incoherent-secret\n"
            "jclouds.identity=incoherent\njclouds.credential=incoherent-secret\n"
            f"jclouds.provider=filesystem-nio2\njclouds.filesystem.basedir={self.store}\n"
            # boto3's checksum headers (x-amz-checksum-*, on DeleteObjects even with S3_CLIENT): 501 otherwise
            "s3proxy.ignore-unknown-headers=true\n"
        )
        self.processes.append(s3.start("s3proxy", ["java", "-Xmx512m", "-jar", S3PROXY, "--properties",
                                                   s3.folder / "s3proxy.conf"], host_env(s3)))  # fmt: skip
        tools = ROOT / "tools"
        self.processes.append(jm.start("jobmanager-script", ["bash", tools / "flink-jobmanager.sh", HOME, jm.folder,
                                       "--bind", jm.address, "--rpc-port", "6123", "--blob-port", "6124",
                                       "--rest-port", "8081"], host_env(jm)))  # fmt: skip
        for role in ("tm1", "tm2"):
            tm = self.hosts[role]
            # the worker host's SDK environment, installed there as a lab would: a venv and the project's wheel
            # (no index: its dependencies are this test venv's site-packages, as tests/test_packaging.py does)
            venv = tm.folder / "venv"
            # the pool starts each SDK worker as `python` from the PATH: the venv's (as `source bin/activate`)
            env = host_env(tm, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv))
            made = tm.run([sys.executable, "-m", "venv", venv], env)
            assert made.returncode == 0, made.stderr
            site = tm.run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          env).stdout.strip()  # fmt: skip
            Path(site, "zz-dependencies.pth").write_text(
                f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
            )
            shutil.copy(wheel, tm.folder)
            installed = tm.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                                tm.folder / wheel.name], env)  # fmt: skip
            assert installed.returncode == 0, installed.stderr
            where = tm.run([venv / "bin" / "python", "-c", "import incoherent.pipelines.cli as m; print(m.__file__)"],
                           env).stdout.strip()  # fmt: skip
            assert where.startswith(site), where  # the wheel's copy, not the checkout's
            self.processes.append(tm.start("pool", [venv / "bin" / "python", "-m",
                                                    "apache_beam.runners.worker.worker_pool_main",
                                                    f"--service_port={POOL_PORT}",
                                                    # SDK workers with the pipeline's options (its S3 settings)
                                                    f"--container_executable={venv / 'bin' / 'incoherent-sdk-worker'}"],
                                                   env))  # fmt: skip
            self.processes.append(tm.start("taskmanager-script", ["bash", tools / "flink-taskmanager.sh", HOME,
                                           tm.folder, "--jobmanager", f"{jm.address}:6123", "--bind", tm.address,
                                           "--rpc-port", "6122", "--data-port", "6121", "--slots", "2"], env))  # fmt: skip
        logs = [
            h.folder / f"{n}.log"
            for h in self.hosts.values()
            for n in ("jobmanager", "taskmanager", "s3proxy")
        ]
        wait_until(lambda: self.slots() >= 4, "the JobManager lists 2 TaskManagers of 2 slots", 300, logs)
        wait_until(lambda: self.s3_answers(), "s3proxy answers", 120, logs)
        # the Quickstart's inputs uploaded to the bucket from the driver (as `aws s3 cp` would)
        upload = (
            "import os, sys, boto3\n"
            "c = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id='incoherent',"
            " aws_secret_access_key='incoherent-secret', region_name='us-east-1')\n"
            "for top in sys.argv[3:]:\n"
            "    for d, _, files in os.walk(top):\n"
            "        for f in files:\n"
            "            path = os.path.join(d, f)\n"
            "            c.upload_file(path, sys.argv[2], 'in/' + os.path.relpath(path, os.path.dirname(os.path.dirname(top))))\n"
        )
        done = self.hosts["driver"].run([sys.executable, "-c", upload, self.endpoint, BUCKET,
                                         ROOT / "samples" / "wikipedia", ROOT / "samples" / "cnn"],
                                        self.driver_env())  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]

    def driver_env(self) -> dict:
        return host_env(self.hosts["driver"], PYTHONPATH=str(ROOT))

    def rest(self, path: str) -> dict:
        """Flink's REST API, asked from the driver host (the only way there: the bridge)."""
        done = self.hosts["driver"].run(["curl", "-sf", "--max-time", "10", f"http://{self.master}{path}"],
                                        self.driver_env(), timeout=30)  # fmt: skip
        if done.returncode != 0:
            raise OSError(f"{path}: curl exited {done.returncode}")
        return json.loads(done.stdout)

    def slots(self) -> int:
        try:
            return self.rest("/overview")["slots-total"]
        except (OSError, ValueError):
            return 0

    def s3_answers(self) -> bool:
        done = self.hosts["driver"].run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                                         f"{self.endpoint}/"], self.driver_env(), timeout=30)  # fmt: skip
        return done.stdout.strip() not in ("", "000")

    def close(self) -> None:
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        delete_network(TAG)
        for process in self.processes:
            process.wait(30)
        for host in self.hosts.values():
            host.holder.wait(30)


def build_wheel(out: Path) -> Path:
    from tests.test_packaging import docker_context

    context = out / "context"
    docker_context(context)
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out / "dist"),
                           str(context)], capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (out / "dist").glob("incoherent-*.whl")
    return wheel


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    delete_stale()
    root = tmp_path_factory.mktemp("hosts")
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    made = None
    try:
        made = Cluster(root, wheel)
        yield made
    finally:
        if made is not None:
            made.close()
        delete_network(TAG)  # also what a half-made cluster left


def parquet_sums(folder: Path) -> dict[str, str]:
    """sha256 of every Parquet file of a build (dataset and work folders), by relative POSIX path."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}  # fmt: skip


def test_hosts_reach_each_other_only_over_the_bridge_and_read_only_their_own_disk(cluster):
    driver, tm1, tm2 = cluster.hosts["driver"], cluster.hosts["tm1"], cluster.hosts["tm2"]
    for host in cluster.hosts.values():  # one route: the bridge's /24; no default route off the machine
        routes = ip("-n", host.ns, "route", "show", "table", "all").stdout
        assert "default" not in routes
        assert [r.split()[0] for r in ip("-n", host.ns, "-4", "route").stdout.splitlines()] == [
            str(ipaddress.ip_network(f"{host.address}/24", strict=False))
        ]
    env = cluster.driver_env()
    probe = (
        "import socket, sys; s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 5); print('ok')"
    )
    jm, s3 = cluster.hosts["jm"], cluster.hosts["s3"]
    # the driver reaches the JobManager's REST port and the object store over the bridge; a TaskManager host
    # reaches the JobManager's RPC and blob ports
    assert driver.run([sys.executable, "-c", probe, jm.address, "8081"], env).stdout == "ok\n"
    assert driver.run([sys.executable, "-c", probe, s3.address, "9000"], env).stdout == "ok\n"
    for port in ("6123", "6124"):
        assert tm2.run([sys.executable, "-c", probe, jm.address, port], host_env(tm2)).stdout == "ok\n"
    # nothing listens on the driver's loopback that the test process's own loopback has (a separate stack)
    mine = socket.create_server(("127.0.0.1", 0))
    try:
        there = driver.run([sys.executable, "-c", probe, "127.0.0.1", str(mine.getsockname()[1])], env)
        assert there.returncode != 0 and "ConnectionRefused" in there.stderr
    finally:
        mine.close()
    # a host's folder is its own: tm1 sees its venv, not tm2's; /tmp is each host's own
    (tm2.folder / "tmp" / "mine").write_text("tm2")
    look = "import os, sys; print(os.path.exists(sys.argv[1]), os.path.exists(sys.argv[2]))"
    seen = tm1.run([sys.executable, "-c", look, tm1.folder / "venv", tm2.folder / "venv"], host_env(tm1))
    assert seen.stdout == "True False\n", seen.stderr
    seen = tm1.run(
        [sys.executable, "-c", look, tm1.folder / "tmp", tm2.folder / "tmp" / "mine"], host_env(tm1)
    )
    assert seen.stdout == "True False\n", seen.stderr


def test_the_quickstart_on_hosts_sharing_only_the_network_is_byte_identical_even_with_a_host_killed(
    cluster, tmp_path
):
    # the local build's bytes, pinned (tests/e2e/test_output_hashes.py checks them against a local build)
    pinned = json.loads(HASHES.read_text())["default"]
    expected = {name: pinned[name] for name in pinned if name.endswith(".parquet")}
    assert len(expected) == 18
    driver = cluster.hosts["driver"]
    # the Quickstart's config with its inputs in the bucket
    config = yaml.safe_load((ROOT / "pipelines" / "configs" / "default.yaml").read_text())
    config.pop("base"), config.pop("out")
    for source in config["sources"].values():
        for key in ("inputs", "history"):
            if key in source:
                source[key] = [f"s3://{BUCKET}/in/{p}" for p in source[key]]
    (driver.folder / "build.yaml").write_text(yaml.safe_dump(config))
    out = f"s3://{BUCKET}/out"
    flags = ["--runner=FlinkRunner", f"--flink_master={cluster.master}", f"--flink_job_server_jar={HOME / JAR}",
             "--environment_type=EXTERNAL", f"--environment_config=localhost:{POOL_PORT}", "--parallelism=2",
             f"--s3_endpoint_url={cluster.endpoint}", *KEYS]  # fmt: skip
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", driver.folder / "build.yaml", "--out", out,
               *flags]  # fmt: skip
    started = time.monotonic()
    with open(tmp_path / "build.stderr", "w") as err:  # followed while it runs: tail -f
        whole = subprocess.run(driver.command(command), env=cluster.driver_env(), stdout=subprocess.DEVNULL,
                               stderr=err, timeout=2400)  # fmt: skip
    whole_s = time.monotonic() - started
    whole.stderr = (tmp_path / "build.stderr").read_text()
    assert whole.returncode == 0, whole.stderr[-5000:]
    remote = cluster.store / BUCKET / "out"  # the object store's own disk (the filesystem backend)
    assert parquet_sums(remote) == expected
    # both TaskManager hosts' pools ran SDK workers
    for role in ("tm1", "tm2"):
        log = (cluster.hosts[role].folder / "pool.log").read_text(errors="replace")
        assert "Starting worker with command" in log, role  # the pool's line for each SDK worker it starts
    jobs = cluster.rest("/jobs/overview")["jobs"]
    # the figures of docs/scale-out.md#a-cluster: each stage's time, and its Flink job's (the rest is overhead)
    stages = json.loads((remote / "build_summary.json").read_text())["seconds"]
    flink_s = sorted(round(j["duration"] / 1000) for j in jobs)
    print(f"\nwhole build on the hosts: {whole_s:.0f} s; stages {stages}; Flink jobs' own seconds {flink_s}")

    # again from intruders on (the build resumes), and the tm1 host killed in the middle of that stage
    shutil.rmtree(remote / "work" / "intruders")
    known = {j["jid"] for j in jobs}
    again = time.monotonic()
    build = subprocess.Popen(driver.command(command), env=cluster.driver_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        job = None
        deadline = time.monotonic() + 1200
        while build.poll() is None and job is None:
            assert time.monotonic() < deadline, "the intruders job did not get under way"
            time.sleep(1)
            try:
                running = [j for j in cluster.rest("/jobs/overview")["jobs"] if j["jid"] not in known]
            except (OSError, ValueError):
                continue
            for candidate in running:
                tasks = candidate["tasks"]
                if candidate["state"] == "RUNNING" and 0 < tasks["finished"] < tasks["total"]:
                    job = candidate
                    kill_namespace(cluster.hosts["tm1"].ns)
                    break
        assert job is not None, "the stage ended before a task of its job had finished"
        stdout, stderr = build.communicate(timeout=1800)
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()
    (tmp_path / "killed.stderr").write_text(stderr)
    assert build.returncode == 0, stderr[-5000:]
    failures = json.dumps(cluster.rest(f"/jobs/{job['jid']}/exceptions"))
    assert cluster.hosts["tm1"].address in failures, failures[:3000]  # the job failed over the lost host
    assert cluster.rest(f"/jobs/{job['jid']}")["state"] == "FINISHED"
    managers = cluster.rest("/taskmanagers")["taskmanagers"]
    assert [m["id"].split(":")[0] for m in managers] == [cluster.hosts["tm2"].address]
    assert parquet_sums(remote) == expected
    print(f"the build again from intruders, tm1 killed: {time.monotonic() - again:.0f} s")
