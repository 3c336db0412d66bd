#!/usr/bin/env python3
"""Writes monitoring/sql_exporter_rules.yml from monitoring/sql_exporter.yml: one recording rule
per value column of each query, giving prometheus-sql-exporter's series (sql_idgen_<query>{col=...})
the names postgres_exporter's custom queries give the same value (pg_idgen_<query>_<column>), so
that monitoring/alerts.yml serves both exporters. Checks that the two files name the same metrics.

    tools/monitoring_rules.py            rewrite monitoring/sql_exporter_rules.yml
    tools/monitoring_rules.py --check    exit 1 when the file differs from what it would write,
                                         or when the two exporters' files name different metrics
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQL_EXPORTER = ROOT / "monitoring/sql_exporter.yml"
POSTGRES_EXPORTER = ROOT / "monitoring/postgres_exporter.yaml"
RULES = ROOT / "monitoring/sql_exporter_rules.yml"
# The labels prometheus-sql-exporter adds to every series, dropped by the rules.
EXPORTER_LABELS = "col, database, driver, host, sql_job, user"
HEADER = """\
# Recording rules that give the metrics of prometheus-sql-exporter (monitoring/sql_exporter.yml)
# the names of monitoring/postgres_exporter.yaml, so that monitoring/alerts.yml serves both.
# Written by tools/monitoring_rules.py from monitoring/sql_exporter.yml: edit that, then run it.
groups:
  - name: pg_idgen_sql_exporter
    rules:
"""


def sql_exporter_metrics():
    """(recorded name, sql_exporter query name, column) of every value column, in file order."""
    out, name = [], None
    for line in SQL_EXPORTER.read_text().splitlines():
        m = re.match(r"\s*- name: (idgen_\w+)\s*$", line)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"\s*values: \[(.*)\]\s*$", line)
        if m and name:
            for col in (c.strip() for c in m.group(1).split(",")):
                out.append((f"pg_{name}_{col}", name, col))
    return out


def postgres_exporter_metrics():
    """The names postgres_exporter gives: pg_idgen_<query>_<column> of every non-label column."""
    names, query, column = [], None, None
    for line in POSTGRES_EXPORTER.read_text().splitlines():
        m = re.match(r"^(pg_idgen_\w+):\s*$", line)
        if m:
            query = m.group(1)
            continue
        m = re.match(r"^    - (\w+):\s*$", line)
        if m:
            column = m.group(1)
            continue
        m = re.match(r'^\s+usage: "(\w+)"', line)
        if m and query and column and m.group(1) != "LABEL":
            names.append(f"{query}_{column}")
    return names


def render(metrics):
    rules = "".join(
        f"      - record: {record}\n"
        f"        expr: max without ({EXPORTER_LABELS}) (sql_{query}{{col=\"{col}\"}})\n"
        for record, query, col in metrics)
    return HEADER + rules


def main():
    metrics = sql_exporter_metrics()
    ours, theirs = {r for r, _, _ in metrics}, set(postgres_exporter_metrics())
    problems = [f"only in {SQL_EXPORTER.name}: {n}" for n in sorted(ours - theirs)]
    problems += [f"only in {POSTGRES_EXPORTER.name}: {n}" for n in sorted(theirs - ours)]
    text = render(metrics)
    if "--check" in sys.argv[1:]:
        if RULES.read_text() != text:
            problems.append(f"{RULES.relative_to(ROOT)} is not what tools/monitoring_rules.py writes: run it")
    else:
        RULES.write_text(text)
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
