"""Vector's kubernetes_logs keys that change records: ingestion_timestamp_field."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from logagent.config import ConfigError, build_config
from tests.agent_process import offline_config

REPO = Path(__file__).resolve().parent.parent


def test_ingestion_timestamp_field_is_set_on_every_record(tmp_path: Path) -> None:
    log = tmp_path / "pods" / "shop_web-1_uid-1" / "app" / "0.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"2026-12-03T10:00:00.000000001Z stdout F one\n2026-12-03T10:00:00.000000002Z stdout P two \n"
                    b"2026-12-03T10:00:00.000000003Z stdout F halves\n")
    config = offline_config(tmp_path, tmp_path / "pods", extra="    ingestion_timestamp_field: .ingest_timestamp\n")
    before = datetime.now(UTC)
    result = subprocess.run([sys.executable, "-m", "logagent", "run", "--config", str(config), "--once"],
                            capture_output=True, timeout=120, cwd=REPO)
    after = datetime.now(UTC)
    assert result.returncode == 0, result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [r["message"] for r in records] == ["one", "two halves"]
    for record in records:
        read_at = datetime.strptime(record["ingest_timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert before <= read_at <= after
        assert record["timestamp"].startswith("2026-12-03T10:00:00")


@pytest.mark.parametrize(("value", "why"), [
    (".kubernetes.ingested", "expected a top-level field"),
    ("message", '"message" is a field the source already writes'),
    (".hostname", '"hostname" is a field the source already writes'),
])
def test_ingestion_timestamp_field_may_not_take_a_field_the_source_writes(value: str, why: str) -> None:
    raw = {"sources": {"a": {"type": "kubernetes_logs", "ingestion_timestamp_field": value,
                             "pod_annotation_fields": {"pod_node_name": "hostname"}}},
           "sinks": {"o": {"type": "console", "inputs": ["a"]}}}
    with pytest.raises(ConfigError) as info:
        build_config(raw, {})
    assert str(info.value).startswith("sources.a.ingestion_timestamp_field: ") and why in str(info.value)
