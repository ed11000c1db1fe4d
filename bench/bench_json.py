"""Reads Google Benchmark JSON files (--benchmark_out_format=json, with aggregates) into rows.

Shared by plot_gemm.py and tables.py (python3 standard library only).
"""
import json


def load(paths):
    """Returns a list of dicts: family (e.g. 'GemmOneDNN'), args (dict name -> int), label,
    median real and CPU time (of the main thread) in ns, and the counters of the median aggregate (or of the single run)."""
    rows = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("error_occurred"):
                continue
            agg = b.get("aggregate_name")
            if agg not in (None, "median"):
                continue
            run = b.get("run_name", b["name"])
            parts = run.split("/")
            family = parts[0][3:] if parts[0].startswith("BM_") else parts[0]
            args = {}
            for p in parts[1:]:
                if ":" in p:
                    k, v = p.split(":", 1)
                    if v.lstrip("-").isdigit():
                        args[k] = int(v)
            key = (family, tuple(sorted(args.items())))
            if key in rows and agg is None:
                continue  # keep the median aggregate when both are present
            unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
            row = {"family": family, "args": args, "label": b.get("label", ""),
                   "real_ns": b["real_time"] * unit, "cpu_ns": b["cpu_time"] * unit}
            for k, v in b.items():
                if k.endswith("/s") or k == "items_per_second":
                    row[k] = v
            rows[key] = row
    return list(rows.values())


def find(rows_, family_, **args):
    for r in rows_:
        if r["family"] == family_ and all(r["args"].get(k) == v for k, v in args.items()):
            return r
    return None
