"""The alert rules and the dashboard (deploy/monitoring) are well formed, their PromQL parses,
and every metric they use is one a REAL bete-server exports: the server is started, called over
gRPC (committed Python stubs) so its per-call families exist, and its /metrics scraped."""

from __future__ import annotations

import json
import re
import time
import urllib.request

import grpc
import promql_parser
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

import realserver
from bete.v1 import bot_service_pb2, bot_service_pb2_grpc
from bete.v1 import table_service_pb2, table_service_pb2_grpc

REPO = realserver.REPO
MONITORING = REPO / "deploy" / "monitoring"

# Labels Prometheus adds at scrape time (job, instance) or Kubernetes service discovery commonly
# relabels in; `up` is Prometheus's own series per target.
SCRAPE_LABELS = {"job", "instance", "namespace", "pod"}
PROMETHEUS_OWN = {"up"}
SEVERITIES = {"critical", "warning", "info"}


# ---- what the files use ---------------------------------------------------------------------


def alert_rules() -> list[dict]:
    doc = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    assert set(doc) == {"groups"}
    rules = []
    names = set()
    for group in doc["groups"]:
        assert set(group) <= {"name", "interval", "rules"} and group["name"] not in names
        names.add(group["name"])
        rules.extend(group["rules"])
    return rules


def dashboard_exprs() -> list[str]:
    dash = json.loads((MONITORING / "dashboard.json").read_text())
    exprs = []

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dash["panels"]):
        for t in p.get("targets", []):
            exprs.append(t["expr"])
    return exprs


def parse(expr: str):
    # Grafana's interval variables are not PromQL; any duration stands in for them.
    return promql_parser.parse(re.sub(r"\$__(rate_)?interval", "5m", expr))


def selectors(node):
    """Every vector selector in a parsed expression."""
    if isinstance(node, promql_parser.VectorSelector):
        yield node
    elif isinstance(node, promql_parser.MatrixSelector):
        yield node.vector_selector
    elif isinstance(node, promql_parser.BinaryExpr):
        yield from selectors(node.lhs)
        yield from selectors(node.rhs)
    elif isinstance(node, promql_parser.Call):
        for a in node.args:
            yield from selectors(a)
    elif isinstance(node, promql_parser.AggregateExpr):
        yield from selectors(node.expr)
        if node.param is not None:
            yield from selectors(node.param)
    elif isinstance(node, (promql_parser.ParenExpr, promql_parser.UnaryExpr, promql_parser.SubqueryExpr)):
        yield from selectors(node.expr)


def used() -> list[tuple[str, str, list]]:
    """(where, metric name, matchers) for every selector in the rules and the dashboard."""
    out = []
    for r in alert_rules():
        for s in selectors(parse(r["expr"])):
            out.append((f"alert {r['alert']}", s.name, s.matchers.matchers))
    for e in dashboard_exprs():
        for s in selectors(parse(e)):
            out.append((f"dashboard {e[:60]}", s.name, s.matchers.matchers))
    return out


# ---- the real server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scrape(tmp_path_factory):
    """The metric families of a real server after a few calls: {sample name: label names}."""
    with realserver.running(tmp_path_factory.mktemp("bete-metrics")) as (api, metrics):
        with grpc.insecure_channel(api) as ch:
            tables = table_service_pb2_grpc.TableServiceStub(ch)
            bots = bot_service_pb2_grpc.BotServiceStub(ch)
            bots.RegisterBot(bot_service_pb2.RegisterBotRequest(name="metrics-probe", owner="deploy tests"), timeout=10)
            tables.ListTables(table_service_pb2.ListTablesRequest(), timeout=10)
            # Refused calls count too, under their code.
            with pytest.raises(grpc.RpcError):
                tables.SubmitAction(table_service_pb2.SubmitActionRequest(table_id="t_missing"), timeout=10)
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=5) as r:
                    text = r.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    samples: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.setdefault(s.name, set()).update(s.labels)
    return samples


def source_label_values() -> dict[str, set[str]]:
    """The values the server can give the `method` and `code` labels, from its source."""
    service = REPO / "service"
    methods = set()
    for path in service.glob("*/src/**/*.rs"):
        methods.update(re.findall(r'(?:\.call|observe_rpc)\(\s*"([A-Za-z]+)"', path.read_text()))
    codes = set(re.findall(r'=> "([A-Z_]+)"', (service / "base" / "src" / "metrics.rs").read_text()))
    return {"method": methods, "code": codes}


# ---- the tests --------------------------------------------------------------------------------


def test_alert_rules_are_well_formed():
    rules = alert_rules()
    assert len(rules) >= 5
    seen = set()
    for r in rules:
        assert set(r) <= {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}, r
        assert re.fullmatch(r"Bete[A-Za-z]+", r["alert"]) and r["alert"] not in seen
        seen.add(r["alert"])
        assert re.fullmatch(r"\d+[smh]", r["for"])
        assert r["labels"]["severity"] in SEVERITIES
        assert r["annotations"]["summary"] and r["annotations"]["description"]
        parse(r["expr"])  # raises on bad PromQL


def result_labels(node):
    """The labels an alert expression's result keeps, or None if any selector label may stay."""
    while isinstance(node, (promql_parser.BinaryExpr, promql_parser.ParenExpr)):
        node = node.lhs if isinstance(node, promql_parser.BinaryExpr) else node.expr
    if isinstance(node, promql_parser.AggregateExpr):
        m = node.modifier
        if m is not None and str(m.type).endswith("By"):
            return set(m.labels)
        return set() if m is None else None
    return None


def test_alert_annotations_use_only_labels_the_result_keeps():
    for r in alert_rules():
        keeps = result_labels(parse(r["expr"]))
        text = " ".join(r["annotations"].values())
        for label in re.findall(r"\$labels\.(\w+)", text):
            assert keeps is None or label in keeps, f"{r['alert']}: $labels.{label} is aggregated away"


def test_dashboard_is_well_formed():
    dash = json.loads((MONITORING / "dashboard.json").read_text())
    assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 36
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    exprs = dashboard_exprs()
    assert len(exprs) >= 10
    for e in exprs:
        parse(e)


def test_promql_parser_refuses_bad_promql():
    # The check above can fail: a broken expression does not parse.
    with pytest.raises(Exception):
        parse("sum(rate(bete_moves_total[5m])")
    assert [s.name for s in selectors(parse('a / on() sum(rate(b{x="1"}[5m])) > bool c'))] == ["a", "b", "c"]


def test_every_metric_used_is_exported_by_the_server(scrape):
    assert "bete_moves_total" in scrape and "bete_rpc_duration_seconds_bucket" in scrape
    missing = sorted({f"{where}: {name}" for where, name, _ in used()
                      if name not in scrape and name not in PROMETHEUS_OWN})
    assert missing == [], "metrics the server does not export"


def test_every_label_used_exists(scrape):
    values = source_label_values()
    assert {"SubmitAction", "ListTables", "WatchBot"} <= values["method"]
    assert {"OK", "INTERNAL", "UNAVAILABLE", "RESOURCE_EXHAUSTED"} <= values["code"]
    wrong = []
    for where, name, matchers in used():
        if name in PROMETHEUS_OWN:
            continue
        for m in matchers:
            if m.name not in scrape.get(name, set()) | SCRAPE_LABELS:
                wrong.append(f"{where}: {name} has no label {m.name}")
            elif m.name in values and str(m.op).endswith(("Equal", "NotEqual")) and m.value not in values[m.name]:
                wrong.append(f"{where}: {m.name}={m.value!r} is never exported")
    assert wrong == []


def test_a_metric_the_server_does_not_export_is_caught(scrape):
    # What the check above reports for a name the server lacks (e.g. a store metric not built).
    names = [s.name for s in selectors(parse("histogram_quantile(0.99, rate(bete_store_commit_seconds_bucket[5m]))"))]
    assert names == ["bete_store_commit_seconds_bucket"] and names[0] not in scrape
