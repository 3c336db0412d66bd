"""Runs the custom queries of monitoring/cloudnative-pg.yaml as CloudNativePG's exporter runs them
(docs/monitoring.md, "CloudNativePG"): each in a read-only transaction, with search_path pinned to
pg_catalog, public, pg_temp (1.29 and later), as a member of pg_monitor, in one database. Checks
that the ConfigMap holds custom queries CloudNativePG can take (a query, metrics of a known usage,
no `primary`/`master` that would keep them from the standbys), that each query runs and returns
exactly the columns its metrics name, and prints the names the exporter gives its values
(cnpg_<query>_<column>), one a line, after the problems (each line starting "problem:").

Usage: cnpg_queries.py CONFIGMAP PORT USER DBNAME
"""

import csv
import io
import subprocess
import sys

import yaml

CONFIGMAP, PORT, USER, DBNAME = sys.argv[1:5]
USAGES = {"DISCARD", "LABEL", "COUNTER", "GAUGE", "MAPPEDMETRIC", "DURATION", "HISTOGRAM"}

doc = yaml.safe_load(open(CONFIGMAP))
problems, names = [], []
if doc.get("kind") != "ConfigMap" or "cnpg.io/reload" not in (doc.get("metadata", {}).get("labels") or {}):
    problems.append("not a ConfigMap labelled cnpg.io/reload")
queries = yaml.safe_load(doc["data"]["custom-queries"])
for qname, spec in queries.items():
    if spec.get("primary") or spec.get("master"):
        problems.append(f"{qname}: runs on the primary only")
    columns = []
    for metric in spec["metrics"]:
        ((column, how),) = metric.items()
        if how.get("usage") not in USAGES:
            problems.append(f"{qname}.{column}: usage {how.get('usage')!r}")
        columns.append(column)
        if how.get("usage") not in ("LABEL", "DISCARD"):
            names.append(f"cnpg_{qname}_{column}")
    sql = ("BEGIN READ ONLY; SET LOCAL search_path = pg_catalog, public, pg_temp;\n"
           f"{spec['query']};\nCOMMIT;")
    run = subprocess.run(["psql", "-h", "127.0.0.1", "-p", PORT, "-U", USER, "-d", DBNAME, "-X", "-q",
                          "--csv", "-v", "ON_ERROR_STOP=1"], input=sql, capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(f"{qname}: {run.stderr.strip()}")
        continue
    header = next(csv.reader(io.StringIO(run.stdout)), [])
    if header != columns:
        problems.append(f"{qname}: returns {header}, its metrics name {columns}")
for p in problems:
    print(f"problem: {p}")
for n in names:
    print(n)
