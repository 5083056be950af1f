"""Registration lookups and publishing against real nats-server processes (figures, not pass/fail).

1. One server, 10,000 registrations in the stream:
   - ``ccm registration query --json`` of all of them (a fresh process),
   - ``ccm apply`` of a manifest whose Jet template ranges over ``registrations('*','*','*','*')``,
   each as a ratio to a bare nats-py script (fresh process, same interpreter) that reads the
   same subjects with an ordered consumer, last-per-subject delivery; plus the in-process
   ``ccm.registration.stream.lookup`` against the same read done in-process.
2. A 3-node JetStream cluster (R3 stream): 1,000 simulated nodes each publishing 10 entries
   through the ``jetstream`` publisher (acknowledged, Nats-Rollup/Nats-TTL), from worker
   threads each with its own connection: entries/s, and p50/p99 of a one-service lookup
   (in-process, and ``ccm registration query`` processes) while they publish.

    python bench/bench_registration.py [--entries 10000] [--nodes 1000] [--workers 16]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "nats"))

from natsfixture import Cluster, Server, run_js, write_context  # noqa: E402

# The baseline: nats-py's own ordered consumer with a callback (its fastest form; a
# next_msg() loop is about 5x slower), collecting bodies until nothing is pending.
BARE_READ = r'''
async def bare_read(nc):
    import asyncio, nats.js.api as api
    js = nc.jetstream()
    done = asyncio.get_running_loop().create_future()
    bodies = []
    async def cb(msg):
        bodies.append(msg.data)
        if msg.metadata.num_pending == 0 and not done.done():
            done.set_result(None)
    sub = await js.subscribe("choria.ccm.registration.v1.*.*.*.*.*", stream="REGISTRATION", ordered_consumer=True,
                             deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT, cb=cb)
    await asyncio.wait_for(done, 60)
    await sub.unsubscribe()
    return bodies
'''
BARE = BARE_READ + r'''
import asyncio, sys, nats
async def main():
    nc = await nats.connect(sys.argv[1])
    n = len(await bare_read(nc))
    await nc.close()
    print(n)
asyncio.run(main())
'''
_ns: dict = {}
exec(BARE_READ, _ns)
bare_read = _ns["bare_read"]


def ccm_argv() -> list:
    pyz = os.path.join(ROOT, "dist", "ccm.pyz")
    return [sys.executable, pyz] if os.path.exists(pyz) else [sys.executable, "-m", "ccm"]


def timed(argv, env, cwd=None) -> float:
    started = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd or ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - started
    if r.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed: {r.stderr[-2000:]}")
    return took


def best(fn, runs=5) -> float:
    return min(fn() for _ in range(runs))


def fill(url: str, count: int) -> None:
    from ccm.registration.entry import Entry
    from ccm.registration.subjects import publish_subject

    async def fn(nc):
        js = nc.jetstream()
        for i in range(count):
            e = Entry("prod", f"svc{i % 50}", "http", f"10.{i // 65536}.{i // 256 % 256}.{i % 256}", 8080, 10,
                      {"rack": f"r{i % 7}"})
            await js.publish_async(publish_subject(e), e.to_json(), headers={"Nats-Rollup": "sub"})
        await js.publish_async_completed()
    run_js(url, fn, timeout=300)


def part1(work: str, entries: int) -> None:
    from ccm.nats.connection import Connection
    from ccm.registration import stream

    server = Server(os.path.join(work, "single")).start()
    try:
        cfg = os.path.join(work, "cfg1")
        write_context(cfg, "CCM", {"url": server.url})
        env = dict(os.environ, XDG_CONFIG_HOME=cfg)
        os.environ["XDG_CONFIG_HOME"] = cfg
        subprocess.run(ccm_argv() + ["registration", "init", "--max-age", "1h"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        fill(server.url, entries)
        bare = os.path.join(work, "bare.py")
        with open(bare, "w") as fh:
            fh.write(BARE)
        out = subprocess.run([sys.executable, bare, server.url], capture_output=True, text=True, check=True).stdout
        assert int(out) == entries, out
        t_bare = best(lambda: timed([sys.executable, bare, server.url], env))
        t_query = best(lambda: timed(ccm_argv() + ["registration", "query", "--json"], env))
        jet = os.path.join(work, "all.jet")
        with open(jet, "w") as fh:
            fh.write('[[ range _, e := registrations("*", "*", "*", "*") ]][[ e.Address ]]:[[ e.Port ]]\n[[ end ]]')
        target = os.path.join(work, "upstreams.txt")
        manifest = os.path.join(work, "m.yaml")
        import grp
        import pwd
        with open(manifest, "w") as fh:
            fh.write(f"ccm:\n  resources:\n    - file:\n        - {target}:\n            ensure: present\n"
                     f"            owner: {pwd.getpwuid(os.getuid()).pw_name}\n"
                     f"            group: {grp.getgrgid(os.getgid()).gr_name}\n"
                     f"            mode: \"0644\"\n            content: \"{{{{ jet('all.jet') }}}}\"\n")
        t_tmpl = best(lambda: timed(ccm_argv() + ["apply", "--no-report", manifest], env, cwd=work))
        with open(target) as fh:
            assert len(fh.read().splitlines()) == entries

        conn = Connection("CCM")
        got = stream.lookup(conn, "REGISTRATION")
        assert len(got) == entries
        t_lookup = best(lambda: _timed_call(lambda: stream.lookup(conn, "REGISTRATION")))
        conn.close()

        async def inproc(nc):
            started = time.perf_counter()
            await bare_read(nc)
            return time.perf_counter() - started
        t_inproc = min(run_js(server.url, inproc) for _ in range(5))

        print(f"== {entries} registrations, one server (best of 5)")
        print(f"  bare nats-py ordered-consumer read, fresh process   {t_bare * 1000:8.0f} ms   1.00x")
        print(f"  ccm registration query --json (all)                 {t_query * 1000:8.0f} ms   {t_query / t_bare:.2f}x")
        print(f"  ccm apply: Jet range over registrations('*'x4)      {t_tmpl * 1000:8.0f} ms   {t_tmpl / t_bare:.2f}x")
        print(f"  in-process: bare ordered-consumer read              {t_inproc * 1000:8.0f} ms   1.00x")
        print(f"  in-process: ccm.registration.stream.lookup          {t_lookup * 1000:8.0f} ms   {t_lookup / t_inproc:.2f}x")
    finally:
        server.stop()


def _timed_call(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def pct(values, p) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def part2(work: str, nodes: int, workers: int) -> None:
    from ccm.nats.connection import Connection
    from ccm.registration import stream
    from ccm.registration.entry import Entry
    from ccm.registration.publish import Publisher

    cluster = Cluster(os.path.join(work, "cluster")).start()
    try:
        cfg = os.path.join(work, "cfg2")
        write_context(cfg, "CCM", {"url": cluster.urls})
        env = dict(os.environ, XDG_CONFIG_HOME=cfg)
        os.environ["XDG_CONFIG_HOME"] = cfg
        subprocess.run(ccm_argv() + ["registration", "init", "--replicas", "3", "--max-age", "1h"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        done = threading.Event()
        counts = [0] * workers
        errors: list = []

        def worker(w: int) -> None:
            conn = Connection("CCM")
            pub = Publisher(conn, "jetstream", "REGISTRATION")
            try:
                for node in range(w, nodes, workers):
                    for k in range(10):
                        pub.publish(Entry("fleet", f"svc{k}", "http", f"10.9.{node // 256}.{node % 256}", 8000 + k,
                                          10, {"node": str(node)}, 3600 * 10**9))
                        counts[w] += 1
            except Exception as exc:   # reported below
                errors.append(exc)
            finally:
                conn.close()

        lat: list = []
        cli_lat: list = []

        def querier() -> None:
            conn = Connection("CCM")
            try:
                while not done.is_set():
                    lat.append(_timed_call(lambda: stream.lookup(conn, "REGISTRATION", "fleet", "http", "svc3", "*")))
                    time.sleep(0.02)
            finally:
                conn.close()

        def cli_querier() -> None:
            while not done.is_set():
                cli_lat.append(timed(ccm_argv() + ["registration", "query", "fleet", "http", "svc3", "--json"], env))

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
        q = threading.Thread(target=querier)
        cq = threading.Thread(target=cli_querier)
        started = time.perf_counter()
        for t in threads:
            t.start()
        q.start()
        cq.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - started
        done.set()
        q.join()
        cq.join()
        if errors:
            raise SystemExit(f"publishing failed: {errors[0]}")
        total = sum(counts)
        final = stream.lookup(Connection("CCM"), "REGISTRATION", "fleet")
        print(f"== {nodes} nodes x 10 entries, jetstream publisher, 3-node cluster, R3 stream, {workers} workers")
        print(f"  published {total} entries in {took:.1f} s: {total / took:.0f} entries/s; stream holds {len(final)}")
        print(f"  lookup of one service while publishing (in-process, n={len(lat)}): "
              f"p50 {pct(lat, 50) * 1000:.1f} ms, p99 {pct(lat, 99) * 1000:.1f} ms")
        if cli_lat:
            print(f"  ccm registration query of one service (process, n={len(cli_lat)}): "
                  f"p50 {pct(cli_lat, 50) * 1000:.0f} ms, p99 {pct(cli_lat, 99) * 1000:.0f} ms"
                  f" (median {statistics.median(cli_lat) * 1000:.0f} ms)")
    finally:
        cluster.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    print(f"ccm: {' '.join(ccm_argv()[1:])}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench-reg-") as work:
        part1(work, args.entries)
        part2(work, args.nodes, args.workers)


if __name__ == "__main__":
    asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
    main()
