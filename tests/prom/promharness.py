"""A real node_exporter serving a textfile folder and a real Prometheus
scraping it every second, on free localhost ports, for the prom tests.

    with Scraper(textdir, workdir) as s:
        series = s.wait_for('dlcomm_preflight_ok', lambda r: len(r) == 3)

Exits 77 (skip) when the packages are missing."""
import json, os, shutil, signal, socket, subprocess, sys, time, urllib.parse, urllib.request


def need(name):
    path = shutil.which(name)
    if not path:
        print(f"SKIP: {name} not installed (apt install prometheus prometheus-node-exporter)")
        sys.exit(77)
    return path


def free_port(taken):
    for p in range(19000, 19200):
        if p in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
                return p
            except OSError:
                pass
    sys.exit("FAIL: no free port in 19000-19199")


class Scraper:
    def __init__(self, textdir, work):
        self.exporter, self.prom = need("prometheus-node-exporter"), need("prometheus")
        self.textdir, self.work, self.procs = textdir, work, []
        self.log_path = os.path.join(work, "daemons.log")

    def __enter__(self):
        eport = free_port(set())
        self.port = free_port({eport})
        cfg = os.path.join(self.work, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    f"scrape_configs:\n  - job_name: node\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{eport}']\n")
        signal.signal(signal.SIGTERM, lambda *a: (self.stop(), sys.exit(1)))
        log = open(self.log_path, "w")
        self.procs.append(subprocess.Popen(
            [self.exporter, "--collector.textfile.directory=" + self.textdir,
             f"--web.listen-address=127.0.0.1:{eport}"], stdout=log, stderr=log))
        self.procs.append(subprocess.Popen(
            [self.prom, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(self.work, "tsdb"),
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=log, stderr=log))
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []

    def query(self, q):
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return json.load(r)["data"]["result"]
        except (OSError, ValueError, KeyError):
            return None

    def wait_for(self, q, done, seconds=20):
        """The query's result once done(result) holds; FAIL after seconds."""
        got = None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = self.query(q)
            if got is not None and done(got):
                return got
            time.sleep(0.5)
        sys.exit(f"FAIL: Prometheus answered {q!r} with {got} after {seconds} s; see {self.log_path}")


def by_label(series, label):
    """{label value: sample value as float} of a query's result."""
    return {s["metric"].get(label): float(s["value"][1]) for s in series}
