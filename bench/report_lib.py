"""What the benchmark reports (deflate_report.py, echo_report.py,
fanout_report.py) share: reading run files, markdown table lines, number
formats by magnitude and the identity of a measured binary. Standard library
only, like the reports."""
import datetime
import hashlib
import json


def read_runs(paths):
    """The runs of the given JSON files, in order, and the "meta" of the last
    combined results file among them (None if there is none). A combined
    results file (bench/results/*.json, re-rendering an earlier run) gives its
    "runs"; any other file is one run."""
    runs, meta = [], None
    for path in paths:
        with open(path) as f:
            d = json.load(f)
        if "runs" in d:
            runs += d["runs"]
            meta = d.get("meta")
        else:
            runs.append(d)
    return runs, meta


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def sha256_16(path):
    """The first 16 hex digits of a file's SHA-256 (which build was measured), or None."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return None


def row(*cells):
    """One markdown table line."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def rule(text_columns, number_columns=0):
    """The line under a markdown table's header; number columns align right."""
    return "|" + "---|" * text_columns + "---:|" * number_columns


def by_magnitude(v, steps, suffix=""):
    """v formatted by the first of steps, (threshold, divisor, template), whose
    threshold abs(v) reaches, else by the last one; then suffix. A table's
    cells keep about three significant digits whatever the scale."""
    for threshold, divisor, template in steps[:-1]:
        if abs(v) >= threshold:
            return template.format(v / divisor) + suffix
    _, divisor, template = steps[-1]
    return template.format(v / divisor) + suffix


def fmt_rate(v):
    """A rate (messages or deliveries per second) as 1.23M, 45.6k or 789; "-" for None."""
    if v is None:
        return "-"
    return by_magnitude(v, ((1e6, 1e6, "{:.2f}M"), (1e3, 1e3, "{:.1f}k"), (0, 1, "{:.0f}")))


def fmt_ms(v):
    """Milliseconds as 1.23 s, 45 ms or 6.78 ms; "-" for None."""
    if v is None:
        return "-"
    return by_magnitude(v, ((1000, 1000, "{:.2f} s"), (10, 1, "{:.0f} ms"), (0, 1, "{:.2f} ms")))


def ratio(a, b):
    """a / b, or None when either is missing (or b is zero)."""
    return a / b if a is not None and b else None


def fmt_ratio(v):
    """A ratio as a table cell."""
    return "-" if v is None else f"{v:.2f}x"
