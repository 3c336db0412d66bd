#!/usr/bin/env python3
"""Writes the files that let monitoring/alerts.yml serve every exporter from the queries of
monitoring/postgres_exporter.yaml (whose metrics are named pg_idgen_<query>_<column>):
  - monitoring/sql_exporter_rules.yml, from monitoring/sql_exporter.yml: one recording rule per
    value column of each query, giving prometheus-sql-exporter's series (sql_idgen_<query>{col=...})
    those names; checks that the two exporters' files name the same metrics;
  - monitoring/cloudnative-pg.yaml: a ConfigMap of CloudNativePG's custom queries, the same queries
    run on every instance (CloudNativePG's `master`/`primary` would keep them from the standbys);
  - monitoring/cloudnative-pg_rules.yml: recording rules from CloudNativePG's names
    (cnpg_<query>_<column>) to those names.

    tools/monitoring_rules.py            rewrite the three files
    tools/monitoring_rules.py --check    exit 1 when a file differs from what it would write,
                                         or when the two exporters' files name different metrics
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQL_EXPORTER = ROOT / "monitoring/sql_exporter.yml"
POSTGRES_EXPORTER = ROOT / "monitoring/postgres_exporter.yaml"
RULES = ROOT / "monitoring/sql_exporter_rules.yml"
CNPG = ROOT / "monitoring/cloudnative-pg.yaml"
CNPG_RULES = ROOT / "monitoring/cloudnative-pg_rules.yml"
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


CNPG_HEADER = """\
# pg_idgen's metrics for CloudNativePG's built-in exporter: the custom queries of
# monitoring/postgres_exporter.yaml as a ConfigMap, run on every instance (standbys too).
# Written by tools/monitoring_rules.py from monitoring/postgres_exporter.yaml: edit that, then run it.
#   kubectl apply -n <the Cluster's namespace> -f monitoring/cloudnative-pg.yaml
# and in the Cluster (docs/monitoring.md, "CloudNativePG"):
#   spec.monitoring.customQueriesConfigMap: [{name: pg-idgen-monitoring, key: custom-queries}]
# The queries run in the Cluster's application database (bootstrap.initdb.database, `app` unless
# set): where pg_idgen is in another database, give each query `target_databases: [that one]`.
# CloudNativePG names a metric cnpg_<query>_<column>; monitoring/cloudnative-pg_rules.yml records
# each under the name monitoring/alerts.yml uses.
apiVersion: v1
kind: ConfigMap
metadata:
  name: pg-idgen-monitoring
  labels:
    cnpg.io/reload: ""
data:
  custom-queries: |
"""

CNPG_RULES_HEADER = """\
# Recording rules that give the metrics of CloudNativePG's exporter (monitoring/cloudnative-pg.yaml,
# named cnpg_<query>_<column>) the names of monitoring/postgres_exporter.yaml, so that
# monitoring/alerts.yml serves it too. Written by tools/monitoring_rules.py: do not edit.
groups:
  - name: pg_idgen_cloudnative_pg
    rules:
"""


def render_cnpg():
    """The ConfigMap: postgres_exporter.yaml's queries, without its comments and without `master`
    (for postgres_exporter: only in the database it connects to; for CloudNativePG: only on the
    primary, which would hide the standbys' marks from IdgenStandbyMarkBehind)."""
    body = []
    for line in POSTGRES_EXPORTER.read_text().splitlines():
        if line.startswith("#") or re.match(r"^\s+master: true\s*$", line):
            continue
        body.append(f"    {line}".rstrip())
    while body and not body[0]:
        body.pop(0)
    return CNPG_HEADER + "\n".join(body).rstrip() + "\n"


def render_cnpg_rules():
    return CNPG_RULES_HEADER + "".join(
        f"      - record: {name}\n        expr: cnpg_{name}\n" for name in postgres_exporter_metrics())


def main():
    metrics = sql_exporter_metrics()
    ours, theirs = {r for r, _, _ in metrics}, set(postgres_exporter_metrics())
    problems = [f"only in {SQL_EXPORTER.name}: {n}" for n in sorted(ours - theirs)]
    problems += [f"only in {POSTGRES_EXPORTER.name}: {n}" for n in sorted(theirs - ours)]
    for path, text in ((RULES, render(metrics)), (CNPG, render_cnpg()), (CNPG_RULES, render_cnpg_rules())):
        if "--check" in sys.argv[1:]:
            if not path.exists() or path.read_text() != text:
                problems.append(f"{path.relative_to(ROOT)} is not what tools/monitoring_rules.py writes: run it")
        else:
            path.write_text(text)
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
