"""The batch form of programs (``vrl/batch_compiler.py``) against the per-record closures, record by record.

The per-record closures are checked against Vector's VRL by
``test_vrl_language_differential.py`` and the stdlib tests; here every
program of that corpus, and programs aimed at the batch engine's own paths
(writes for part of a batch read back by another part, failures and aborts
in the middle, statements with effects that fail, absent fields), runs over
one batch of records of all shapes: each record's outcome (its event, or its
error or abort message) must be the one ``Program.run`` gives it alone. Then
the same through the remap transform: the events ``process`` makes of a
batch must be those its per-record path makes of each event.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from benchmarks.remap import CONTEXT, DEEPFLOW
from logagent.acks import AckGroup, Batch
from logagent.encoding import encode_json, encode_ndjson
from logagent.event import FileContext, LogEvent, SharedFields
from logagent.transforms.remap import RemapTransform
from logagent.transforms.remap_config import RemapConfig
from logagent.vrl.batch_records import run_records
from logagent.vrl.diagnostic import VrlError
from logagent.vrl.program import Aborted, compile_program
from logagent.vrl.runtime import VrlRuntimeError
from tests.test_vrl_language_differential import PROGRAMS, RECORDS

MORE_RECORDS = [
    {"message": '{"level":"info","msg":"x","n":1}', "stream": "stdout", "kubernetes": {"pod_name": "a"}},
    {"message": '{"a":{"b":1},"message":"inner"}', "stream": "stderr"},
    {"message": "2026-12-02 [ERROR] boom", "s": "12", "o": {"a": 2}},
    {"message": "[1, 2]", "s": "x", "level": "warn"},
    {"message": '{"big": 99999999999999999999}', "n": 1},
    {"message": "  {\"a\": 1}  ", "flag": True},
    {"message": "\ufeff{\"a\": 1}"},
    {"message": "héllo wörld [WARN] ü", "o": None},
]

BATCH_PROGRAMS = [
    DEEPFLOW,
    # an impure call that fails with constant arguments (each record retried once, none left without an error)
    '.host = get_env_var!("LOGAGENT_R22V_UNSET")',
    '.a = 1\n.host = get_env_var("LOGAGENT_R22V_UNSET") ?? "none"',
    'h, err = get_env_var("LOGAGENT_R22V_UNSET")\n.h = h\n.err = err',
    # a kind the function takes at run time though the type check would refuse it (redact: as it is)
    ".a = redact!(.o, filters: [r'\\d'])\n.b, err = redact(.n, filters: [r'\\d'])",
    CONTEXT,
    'if .n == 3 { .x = 1 }\n.y = .x',
    'if exists(.s) { .s = upcase!(.s) } else { .s = "none" }\n.t = .s',
    'if exists(.o) { del(.o.a) }\n.p = .o',
    'if .message == "hello" { del(.n) }\n.has = exists(.n)',
    'x = 1\nif exists(.arr) { x = length!(.arr) }\n.len = x',
    'if exists(.o) { .o.z = 1; del(.o.a); .w = .o } else { .o = "none" }\n.after = .o',
    'if exists(.level) { del(.level) } else { .level = "set" }\n.e = exists(.level)',
    '.a = 1\n.b = to_int!(.s)\n.c = 2',
    'if exists(.s) { .v = to_int!(.s) }\n.after = true',
    '.y = to_int!(del(.s))\n.after = 1',
    'x = 0\n.z = to_int!(.s) + x\n.w = 1',
    'if .n == 3 { abort "three" }\n.kept = true',
    'if exists(.flag) { abort }\n.x = 1',
    'if exists(.s) { if .s == "abc" { abort } else { .inner = true } }\n.outer = true',
    'x, err = parse_json(.message)\n.x = x\n.err = err',
    'if is_string(.message) { .j = parse_json(.message) ?? parse_int(.message) ?? "none" }',
    "if is_string(.message) { .r = parse_regex(.message, r'(?P<w>[a-z]+)') ?? {} }",
    "if is_string(.message) { .r = parse_regex!(.message, r'^(?P<w>[a-z]+)') }\n.after = 1",
    "if is_string(.message) { .r = parse_regex(.message, r'\\[(?P<l>[A-Z]+)\\]', numeric_groups: true) ?? null }",
    'if is_string(.message) { .ok = is_json(string!(.message)) }',
    'if is_string(.message) { .ok = is_json(string!(.message), variant: "object") }',
    'if is_string(.message) && is_json(string!(.message)) { .p = parse_json(.message) ?? {} }',
    'if is_string(.message) && is_json(string!(.message)) { .p = parse_json!(.message, max_depth: 1) }',
    '.p = parse_json(string(.message) ?? "") ?? "bad"',
    '.s2 = string(.s) ?? "x"\n.o2 = object(.o) ?? {}\n.a2 = array(.arr) ?? []',
    '.types = [is_string(.message), is_object(.o), is_integer(.n), is_null(.n), is_array(.arr), is_boolean(.flag)]',
    '.o.new = 1',
    '.q.r.s = .n',
    'del(.o.b.c)',
    '.arr[0] = "first"',
    '.m = {"n": .n, "s": .s}\n.l = [.n, .s, 1]',
    'x = "x"\n.t = "{{ x }}-"',
    '.o = object(.o) ?? {}\n.o |= {"k": .n}',
    'x = {"a": 1}\nx |= {"b": .n}\n.x = x',
    '.message = 5',
    'del(.message)',
    '.message = .n',
    '.k = .kubernetes.pod_name',
    'del(.kubernetes.pod_labels)',
    '.k8s = del(.kubernetes)',
    '.n2 = .n || 0\n.f, err = .flag && true',
    '.c = if exists(.s) { .s } else { "no s" }',
    'y = if .n == 3 { "three" }\n.y = y',
    '.len = length(.message) ?? -1',
    '.sum = to_int(.n) ?? 0 + 1',
    'x = {}\nx.a.b = .n\nx.c = del(x.a.b)\n.x = x',
    'if !exists(.level) { .level = "none" }\nif !exists(._t) { ._t = "user" }',
    '.cmp = .n > 1 ?? false',
    '_, err = to_int(.s)\n.err = err',
    '.g = (.n)\n.h = (1 + 2) * 3',
    'del(.o.a, compact: false)',
    # a decoded object changed in place by its one owner: no other holder may see it
    't = parse_json(.message) ?? {}\n.a = t\ndel(.a.level)\n.b = t',
    'if is_string(.message) && is_json(string!(.message)) { t = parse_json(.message) ?? {}; u = t; del(t.msg); '
    '.u = u; .t = t }',
    'if is_string(.message) && is_json(string!(.message)) { a = parse_json!(.message); b = parse_json!(.message); '
    'del(a.msg); .a = a; .b = b }',
    't = parse_json(.message) ?? {}\n.j = t\n.k = .j\ndel(.j.level)',
    't = parse_json(.message) ?? {}\ndel(t.msg)\n.j = t\nif exists(.j.n) { del(.j.n) }\n.l = [.j]\ndel(.j.level)',
    't = parse_json(.message) ?? {}\nl = [t]\ndel(t.msg)\n.l = l\n.t = t',
    'x, err = parse_json(.message)\ny = x\ndel(x.msg)\n.y = y\n.x = x',
    't = parse_json(.message) ?? {}\n.a = t\nif exists(.n) { .a = {} }\ndel(.a.msg)\n.b = .a',
    'if is_string(.message) && is_json(string!(.message)) { t = parse_json(.message) ?? {}; .j = t; '
    'del(.j.level); .lv = t.level }',
    # both sides of an if write a field (values, deletions, failures, nesting, ownership)
    'if exists(.s) { .v = .s } else { .v = .n }\n.w = .v\n.e = exists(.v)',
    'if exists(.s) { .v = 1 } else { del(.v) }\n.e = exists(.v)',
    'if exists(.s) { .n = 1 } else { del(.n) }\n.e = exists(.n)',
    'if exists(.s) { .v = .s } else { .v = .n; .v = to_int!(.message) }\n.w = .v',
    'if exists(.s) { .v = to_int!(.s) } else { .v = "none" }\n.w = .v',
    'if exists(.s) { .v = "yes" } else { .u = exists(.v); .v = .u }\n.w = .v',
    'if exists(.s) { if .n == 1 { .v = 1 } else { .v = 2 } } else { .v = 3 }\n.w = .v',
    't = object(parse_json(.message) ?? {}) ?? {}\nif !exists(.s) { .o = t } else { .o = {"level": 1} }\n'
    'del(.o.level)\n.t = t',
    'if exists(.s) { .o = parse_json(.message) ?? {} } else { .o = parse_json(.message) ?? {"x": 1} }\n'
    'del(.o.level)\n.c = .o',
]


def per_record(program: Any, record: dict[str, Any]) -> tuple[str, Any]:
    try:
        _, target, _ = program.run(dict(record))
    except VrlRuntimeError as exc:
        return ("error", str(exc))
    except Aborted as exc:
        return ("abort", str(exc))
    return ("ok", target)


@pytest.mark.parametrize("source", PROGRAMS + BATCH_PROGRAMS)
def test_batch_outcomes_are_the_per_record_outcomes(source: str) -> None:
    try:
        program = compile_program(source)
    except VrlError:
        return
    if program.batch is None:
        assert "." in source  # root and metadata forms run per record only
        return
    records = RECORDS + MORE_RECORDS
    assert run_records(program.batch, records) == [per_record(program, record) for record in records]
    for record in records:  # each alone (uniform values, one-record selections)
        assert run_records(program.batch, [record]) == [per_record(program, record)]


def test_the_batch_corpus_runs_in_batches() -> None:
    assert all(compile_program(source).batch is not None for source in BATCH_PROGRAMS)


def test_forms_the_batch_compiler_leaves_to_the_closures() -> None:
    for source in (". = {}", ".x = .", '%m = 1', 'for_each({"a": 1}) -> |k, v| { .x = v }',
                   'log("x")', '.x = 1\nreturn true', 'del(.o.b.c, compact: true)',
                   'if (x = .n; x == 3) { .y = x }'):
        assert compile_program(source).batch is None, source


CONTEXT_FIELDS = {"file": "/var/log/pods/ns_p_u/app/0.log", "source_type": "kubernetes_logs",
                  "kubernetes": {"pod_name": "web-0", "container_name": "app", "pod_labels": {"app": "web"}}}
MESSAGES = ['{"level":"info","msg":"handled","n":1}', "2026-12-02 [INFO] text line", "", "[1, 2]", "12",
            '{"message":"inner","level":"warn"}', '{"nested":{"a":[1,2]}}', "x [ERROR] y", "null", "ünïcode [WARN] z"]
TRANSFORM_PROGRAMS = [
    DEEPFLOW,
    '.host = get_env_var!("LOGAGENT_R22V_UNSET")',
    '.ts = .timestamp',
    '.timestamp = parse_timestamp!("2020-01-01T00:00:00Z", "%+")',
    '.timestamp = "not a time"',
    'if .message == "12" { .timestamp = 5 }',
    '.stream = "x"',
    'del(.stream)',
    'if .message == "" { .truncated = true }',
    '.message = parse_json!(.message)',
    '.kubernetes.pod_name = upcase!(.kubernetes.pod_name)',
    '.kubernetes.x = .message',
    'del(.file)\n.f = 1',
    'if .stream == "stderr" { abort "err" }\n.seen = true',
    '.app = .kubernetes.container_name\n.lvl = "info"',
    'if .message == "12" { del(.message) }',
    '.p = parse_json(.message) ?? null',
]


def _events(ctx: FileContext) -> list[LogEvent]:
    return [LogEvent(m, "stderr" if i % 3 == 0 else "stdout", f"2026-12-02T10:00:0{i % 10}.123456789Z", ctx,
                     truncated=i == 4) for i, m in enumerate(MESSAGES * 2)]


@pytest.mark.parametrize("options", [{}, {"drop_on_error": True}, {"reroute_dropped": True, "drop_on_error": True}])
@pytest.mark.parametrize("source", TRANSFORM_PROGRAMS)
def test_transform_batches_make_the_per_record_events(source: str, options: dict[str, Any]) -> None:
    transform = RemapTransform("r", RemapConfig(inputs=["in"], source=source, **options))  # type: ignore[arg-type]
    assert transform.program.batch is not None
    ctx = FileContext(CONTEXT_FIELDS)
    events = _events(ctx)
    expected: list[Any] = []
    for event in events:
        outcome = transform._run_record(event)
        expected.append(json.loads(encode_json(outcome)) if type(outcome) is LogEvent else outcome)
    outputs = transform.process(Batch(events, [AckGroup(lambda: None)], 100, ctx))
    kept = [json.loads(encode_json(e)) for name, batch in outputs if name == "" for e in batch.events]
    want = [record if type(record) is dict else json.loads(encode_json(event))
            for record, event in zip(expected, events)
            if type(record) is dict or not (options.get("drop_on_error") or record[0] == "aborted")]
    assert kept == want
    for name, batch in outputs:
        assert encode_ndjson(batch.events) == b"".join(encode_json(e) + b"\n" for e in batch.events)
        for event in batch.events:  # the event model's promises
            assert event.fields is None or event.fields or event.message is None
            assert not (event.fields and set(event.fields) & set(event.ctx.fields))


def test_records_in_flight_share_what_they_can() -> None:
    """Same-string fields share one dict, objects stay encoded, a value every record has moves to the context."""
    transform = RemapTransform("r", RemapConfig(inputs=["in"], source=DEEPFLOW))  # type: ignore[arg-type]
    ctx = FileContext(CONTEXT_FIELDS)
    messages = ["a [INFO] x", "b [INFO] y", '{"level":"warn","msg":"m","n":1}', "c [ERROR] z"]
    events = [LogEvent(m, "stdout", "2026-12-02T10:00:00Z", ctx) for m in messages]
    (_, batch), = transform.process(Batch(events, [AckGroup(lambda: None)], 100, ctx))
    first, second, parsed, third = batch.events
    assert first.fields == {"level": "INFO"} and first.fields is second.fields
    assert type(first.fields) is SharedFields and pickle.loads(pickle.dumps(first.fields)) == first.fields
    assert encode_ndjson(batch.events) == encode_ndjson(batch.events)  # the second from the kept encoding
    assert first.fields.encoded == b',"level":"INFO"}\n'
    assert third.fields == {"level": "ERROR"} and third.fields is not first.fields
    assert type(parsed.fields["json"]).__name__ == "Raw" and parsed.get("json") == {"msg": "m", "n": 1}
    assert first.ctx is parsed.ctx and first.ctx.fields["app_service"] == "app" and "app_service" not in first.fields


def test_an_unset_environment_variable_is_each_records_error_as_in_vrl() -> None:
    """Vector's config example ``.host = get_env_var!("HOSTNAME")`` with the variable unset: it used to hang."""
    vrl_python = pytest.importorskip("vrl_python")
    from tests.vrl_oracle import vrl_outcome

    source = '.host = get_env_var!("LOGAGENT_R22V_UNSET")'
    assert vrl_outcome(vrl_python.VRLRuntime(), source, {"message": "a"}) == ("error", None)
    program = compile_program(source)
    assert program.batch is not None
    for n in (1, 2, 5):
        outcomes = run_records(program.batch, [{"message": str(i)} for i in range(n)])
        assert [kind for kind, _ in outcomes] == ["error"] * n
    transform = RemapTransform("r", RemapConfig(inputs=["in"], source=source))  # type: ignore[arg-type]
    ctx = FileContext(CONTEXT_FIELDS)
    events = [LogEvent(m, "stdout", "2026-12-02T10:00:00Z", ctx) for m in ("a", "b")]
    (name, out), = transform.process(Batch(events, [AckGroup(lambda: None)], 100, ctx))
    assert name == "" and [e.message for e in out.events] == ["a", "b"] and transform.errors


def test_a_retry_that_makes_no_progress_is_an_error_not_a_loop() -> None:
    from logagent.vrl.batch_compiler import guarded
    from logagent.vrl.batch_expressions import attempt
    from logagent.vrl.batch_values import BatchErrors, NoProgress

    def fails_for_no_record(run: Any, sel: list[int]) -> Any:
        raise BatchErrors({})

    class Run:
        def fail(self, errors: dict[int, Any]) -> None:
            pass

    with pytest.raises(NoProgress):
        guarded(fails_for_no_record, True)(Run(), [0, 1])  # type: ignore[arg-type]
    with pytest.raises(NoProgress):
        attempt(fails_for_no_record, None, [0, 1])  # type: ignore[arg-type]


def test_the_transform_runs_a_batch_per_record_when_the_batch_engine_stalls(monkeypatch: Any) -> None:
    from structlog.testing import capture_logs

    from logagent.vrl.batch_compiler import BatchProgram
    from logagent.vrl.batch_values import NoProgress

    source = '.host = get_env_var!("LOGAGENT_R22V_UNSET")'
    transform = RemapTransform("r", RemapConfig(inputs=["in"], source=source))  # type: ignore[arg-type]

    def stalled(self: Any, source: Any) -> Any:
        raise NoProgress("stalled")

    monkeypatch.setattr(BatchProgram, "run", stalled)
    ctx = FileContext(CONTEXT_FIELDS)
    events = [LogEvent(m, "stdout", "2026-12-02T10:00:00Z", ctx) for m in ("a", "b")]
    with capture_logs() as logs:
        (name, out), = transform.process(Batch(events, [AckGroup(lambda: None)], 100, ctx))
    assert [e.message for e in out.events] == ["a", "b"] and sum(transform.errors.values()) == 2
    assert [entry["event"] for entry in logs] == ["remap_batch_no_progress"]
