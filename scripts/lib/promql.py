#!/usr/bin/env python3
"""scripts/lib/promql.py — read the PromQL of the Grafana dashboard and of
the Prometheus rules, for the checks that keep both true to the worker.

Why: a dashboard or alert that names a series the worker does not export
shows nothing and never fires, silently. scripts/check-prometheus
(ctest unit.prometheus_rules) has promtool parse every dashboard
expression; tests/integration/it_dashboards.sh compares the metric names
the expressions use with what a running worker exports.

Usage:
  promql.py exprs FILE...          every expression, one per line
  promql.py as-rules FILE...       the expressions as a rules file (one
                                   recording rule each), Grafana's
                                   variables replaced, for promtool check
  promql.py names FILE...          the metric names the expressions use,
                                   sorted, one per line
  promql.py check-names EXPORTED FILE...
                                   EXPORTED is a /metrics scrape; print
                                   every name used but not exported (but
                                   'up', which Prometheus writes itself),
                                   and every label value an exact or
                                   literal =~ matcher asks of a series
                                   that no exported series of that name
                                   carries; exit 1 if there is one

FILE is a dashboard (.json: every panel target's "expr", rows included) or
a rules file (.yml: every `expr:` line; the rules keep each expression on
one line, and a block scalar is refused rather than half read). Exit 2 on a
file it cannot read that way.
"""
import json
import re
import sys

GRAFANA_VARS = {  # what a variable is replaced by for parsing
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "1h",
    "$instance": ".*",
}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right",
            "and", "or", "unless", "offset", "bool", "inf", "nan", "atan2"}
# Series Prometheus writes per target, not the worker.
SCRAPE_SERIES = {"up"}


def die(msg):
    print("promql.py: error: " + msg, file=sys.stderr)
    sys.exit(2)


def dashboard_exprs(path):
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if "expr" in t:
                    out.append(t["expr"])
            walk(p.get("panels", []))

    walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"label_values\((\w+)\s*,\s*\w+\)", q or "")
        if m:
            out.append(m.group(1))
    if not out:
        die(f"{path}: no expression found")
    return out


def rules_exprs(path):
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        die(f"{path}: {e}")
    for n, line in enumerate(lines, 1):
        m = re.match(r"\s*expr:\s*(.*?)\s*$", line)
        if not m:
            continue
        e = m.group(1)
        if e == "" or e[0] in "|>":
            die(f"{path}:{n}: expr must be on one line")
        if e[0] in "'\"":
            die(f"{path}:{n}: write expr without quotes")
        out.append(e)
    if not out:
        die(f"{path}: no expr found")
    return out


def exprs(paths):
    out = []
    for p in paths:
        out += dashboard_exprs(p) if p.endswith(".json") else rules_exprs(p)
    return out


def substitute(e):
    for k, v in GRAFANA_VARS.items():
        e = e.replace(k, v)
    return e


def names(e):
    """Metric names in expression e: identifiers outside strings, label
    braces, ranges and grouping lists that are not functions or keywords."""
    e = substitute(e)
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)
    e = re.sub(r"'(?:[^'\\]|\\.)*'", "''", e)
    e = re.sub(r"\{[^}]*\}", "{}", e)
    e = re.sub(r"\[[^\]]*\]", "[]", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
               " ", e)
    found = set()
    for m in re.finditer(r"(?<![\w.$])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()", e):
        w = m.group(1)
        if w.lower() in KEYWORDS or re.fullmatch(r"\d+[smhdwy]|e\d*", w):
            continue
        found.add(w)
    return found


def selectors(e):
    """(name, label, value) of every exact or literal-alternation matcher
    in e (`name{what="a"}`, `name{what=~"a|b"}` gives a and b); the labels
    Prometheus adds (job, instance) and Grafana variables are skipped."""
    out = []
    for m in re.finditer(r"(?<![\w.$])([A-Za-z_:][\w:]*)\s*\{([^}]*)\}", e):
        for lm in re.finditer(r'(\w+)\s*(=~|=)\s*"([^"]*)"', m.group(2)):
            label, op, val = lm.groups()
            if label in ("job", "instance") or "$" in val:
                continue
            vals = val.split("|") if op == "=~" else [val]
            if op == "=~" and not all(re.fullmatch(r"[\w.+-]+", v) for v in vals):
                continue
            out += [(m.group(1), label, v) for v in vals]
    return out


def exported(scrape_path):
    """The names a scrape declares (# TYPE, with a histogram's _bucket,
    _sum and _count) or carries, and {name: {(label, value)}} of its
    series."""
    out, pairs = set(), {}
    with open(scrape_path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m:
                out.add(m.group(1))
                if m.group(2) == "histogram":
                    out |= {m.group(1) + s for s in ("_bucket", "_sum", "_count")}
            elif line.strip() and not line.startswith("#"):
                m = re.match(r"([^{ ]+)(?:\{([^}]*)\})?", line)
                out.add(m.group(1))
                pairs.setdefault(m.group(1), set()).update(
                    re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
    return out, pairs


def main(argv):
    if len(argv) < 3 or argv[1] not in ("exprs", "as-rules", "names", "check-names"):
        print(__doc__.split("Usage:")[1].split("FILE is")[0], file=sys.stderr)
        return 2
    cmd = argv[1]
    if cmd == "check-names":
        have, pairs = exported(argv[2])
        have |= SCRAPE_SERIES
        if not any(n.startswith("gridbroker_") for n in have):
            die(f"{argv[2]}: no gridbroker_* series in the scrape")
        bad = 0
        for path in argv[3:]:
            for e in exprs([path]):
                for n in sorted(names(e) - have):
                    print(f"{path}: {n} is not exported by the worker (in: {e})")
                    bad += 1
                # a label value no series carries (a family without series
                # yet, like the sparse rejections, cannot be judged)
                for n, label, v in selectors(e):
                    if n in pairs and (label, v) not in pairs[n]:
                        print(f"{path}: no {n} series has {label}=\"{v}\" (in: {e})")
                        bad += 1
        return 1 if bad else 0
    es = exprs(argv[2:])
    if cmd == "exprs":
        print("\n".join(es))
    elif cmd == "names":
        print("\n".join(sorted(set().union(*(names(e) for e in es)))))
    else:
        print("groups:\n  - name: dashboard\n    rules:")
        for i, e in enumerate(es):
            print(f"      - record: dashboard_expr_{i}")
            print(f"        expr: {json.dumps(substitute(e))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
