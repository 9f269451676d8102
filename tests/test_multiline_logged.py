"""Near misses of the log lines that join the exception they logged (Spring Boot's blank line, log4j's line,
ASP.NET Core's console entry) and of the JVM's, Node's and .NET's longer shapes (a cause's message of several
lines, Spark's driver frames, Node 15's rejection report, ts-node's diagnostics): each joins only with the
trace it belongs to, every other line stays itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from logagent.event import FileContext, LogEvent
from logagent.parsers.multiline import MultilineGrouper, MultilineStats
from logagent.parsers.multiline_rules import AUTO, language_machine

CTX = FileContext({"file": "/var/log/pods/x/app/0.log"})
REAL = Path(__file__).parent / "fixtures" / "traces" / "real"

SPRING_ERROR = "2018-08-28 09:01:19.390 ERROR 8816 --- [           main] o.s.boot.SpringApplication               : Application run failed"
SPRING_INFO = "2018-08-28 09:01:19.390  INFO 8816 --- [           main] o.s.boot.SpringApplication               : Started"
LOG4J_ERROR = "18/04/09 09:30:52 ERROR Executor: Exception in task 1.0 in stage 0.0 (TID 1)"
LOG4J_INFO = "18/04/09 09:30:52 INFO Executor: Running task 1.0 in stage 0.0 (TID 1)"
JAVA = ["java.lang.IllegalStateException: boom", "\tat com.x.App.main(App.java:3)"]
FAIL = "fail: Microsoft.AspNetCore.Server.Kestrel[13]"
KESTREL = '      Connection id "0HN", Request id "0HN:01": An unhandled exception was thrown by the application.'
DOTNET = ["      System.InvalidOperationException: boom", "         at Web.Program.Main()"]


def real(name: str) -> list[str]:
    return (REAL / name).read_text().split("\n")[:-1]


def records(lines: list[str]) -> list[list[str]]:
    """The records for every batch size (all the same), each as its lines."""
    results = []
    for batch in (None, 1, 2, 5):
        g = MultilineGrouper(language_machine(AUTO), MultilineStats())
        evs = [LogEvent(line, "stderr", f"t{i}", CTX) for i, line in enumerate(lines)]
        out: list[LogEvent] = []
        step = batch or len(evs)
        for start in range(0, len(evs), step):
            out += g.feed(evs[start:start + step], CTX, 0.0)
        results.append([e.message.split("\n") for e in out + g.flush(CTX)])
    assert all(result == results[0] for result in results)
    return results[0]


def test_spring_boot_error_line_joins_the_exception_after_its_blank_line() -> None:
    assert records([SPRING_ERROR, "", *JAVA, "next"]) == [[SPRING_ERROR, "", *JAVA], ["next"]]


@pytest.mark.parametrize("lines, expected", [
    # an INFO line: never joins
    ([SPRING_INFO, "", *JAVA], [[SPRING_INFO], [""], JAVA]),
    # an ERROR line, a blank line, then an ordinary line
    ([SPRING_ERROR, "", "next", *JAVA], [[SPRING_ERROR], [""], ["next"], JAVA]),
    # two blank lines: not Spring Boot's layout
    ([SPRING_ERROR, "", "", *JAVA], [[SPRING_ERROR], [""], [""], JAVA]),
    # an exception's name without a frame after it
    ([SPRING_ERROR, "", "java.lang.IllegalStateException: boom", "next"],
     [[SPRING_ERROR], [""], ["java.lang.IllegalStateException: boom"], ["next"]]),
])
def test_spring_boot_near_misses(lines: list[str], expected: list[list[str]]) -> None:
    assert records(lines) == expected


def test_log4j_error_line_joins_only_the_exception_right_after_it() -> None:
    assert records([LOG4J_ERROR, *JAVA, "next"]) == [[LOG4J_ERROR, *JAVA], ["next"]]
    assert records([LOG4J_INFO, *JAVA]) == [[LOG4J_INFO], JAVA]
    assert records([LOG4J_ERROR, "next", *JAVA]) == [[LOG4J_ERROR], ["next"], JAVA]
    assert records([LOG4J_ERROR, LOG4J_ERROR]) == [[LOG4J_ERROR], [LOG4J_ERROR]]


def test_a_cause_message_of_several_lines_joins_only_if_a_frame_follows_within_eight() -> None:
    cause = "Caused by: org.postgresql.util.PSQLException: ERROR: duplicate key value"
    detail = ["  Detail: Key (id)=(1) already exists.", "  Where: SQL statement"]
    assert records([*JAVA, cause, *detail, JAVA[1]]) == [[*JAVA, cause, *detail, JAVA[1]]]
    # nine lines: too many
    nine = [f"line {n}" for n in range(9)]
    assert records([*JAVA, cause, *nine, JAVA[1]]) == [[*JAVA, cause], *[[line] for line in nine], [JAVA[1]]]
    # no frame: the lines after the cause stay themselves; a log line's time ends the message
    assert records([*JAVA, cause, "plain", "2026-12-02 10:00:00 INFO up", JAVA[1]]) == [
        [*JAVA, cause], ["plain"], ["2026-12-02 10:00:00 INFO up"], [JAVA[1]]]


def test_spark_driver_stacktrace_and_coroutine_boundary() -> None:
    assert records([*JAVA, "", "Driver stacktrace:", JAVA[1], "next"]) == [[*JAVA, "", "Driver stacktrace:", JAVA[1]], ["next"]]
    assert records([*JAVA, "", "Driver stacktrace:", "next"]) == [JAVA, [""], ["Driver stacktrace:"], ["next"]]
    assert records(["Driver stacktrace:", JAVA[1]]) == [["Driver stacktrace:"], [JAVA[1]]]
    boundary = "\t(Coroutine boundary)"
    assert records([*JAVA, boundary, JAVA[1], "next"]) == [[*JAVA, boundary, JAVA[1]], ["next"]]
    assert records(["next", boundary]) == [["next"], [boundary]]


def test_aspnet_core_console_entry_joins_its_exception() -> None:
    scope = "      => SpanId:a2, TraceId:7d => RequestPath:/throw"
    handler = "      An unhandled exception has occurred while executing the request."
    own = "      order 42 failed"
    for entry in ([FAIL, KESTREL], [FAIL, scope, handler], ["crit: App.Worker[0]", own], [FAIL, scope, own]):
        assert records(["next", *entry, *DOTNET, "next"]) == [["next"], [*entry, *DOTNET], ["next"]]


@pytest.mark.parametrize("lines", [
    ["info: Microsoft.Hosting.Lifetime[14]", "      Now listening on: http://[::]:8080"],  # not of level fail
    ["info: App.Worker[0]", "      order 42 failed", *DOTNET],
    ["warn: App.Worker[0]", KESTREL, *DOTNET],
    [FAIL, KESTREL],  # an entry without an exception
    [FAIL, KESTREL, "      System.InvalidOperationException: boom", "next"],  # an exception without a frame
    [FAIL, "      order 42 failed", "      second line", *DOTNET],  # two lines of the application's message
    [FAIL, "next", *DOTNET],  # the message not indented
])
def test_aspnet_core_console_near_misses(lines: list[str]) -> None:
    assert records(lines)[0] == [lines[0]]


def test_node_15_unhandled_rejection_and_inspected_header_near_misses() -> None:
    rejection = real("node_unhandled_rejection_non_error.txt")
    assert records([*rejection, "next"]) == [rejection, ["next"]]
    # the bracketed line without the source header and caret is no trace
    assert records(["[UnhandledPromiseRejection: x] {", "  code: 'ERR_UNHANDLED_REJECTION'", "}"]) == [
        ["[UnhandledPromiseRejection: x] {"], ["  code: 'ERR_UNHANDLED_REJECTION'"], ["}"]]
    frame = "    at main (/app/index.js:3:9)"
    assert records(["HttpError [Error]: x", frame, "next"]) == [["HttpError [Error]: x", frame], ["next"]]
    assert records(["HttpError [Error]: x", "next"]) == [["HttpError [Error]: x"], ["next"]]
    assert records(["worker [busy]: x", frame]) == [["worker [busy]: x"], [frame]]


def test_ts_node_diagnostics_join_only_under_a_caret_and_before_a_frame() -> None:
    tserror = real("node_ts_node_tserror.txt")
    header, diagnostic = tserror[:4], tserror[4]
    assert records([*tserror, "next"]) == [tserror, ["next"]]
    assert records([*header, diagnostic, "", "next"]) == [header, [diagnostic], [""], ["next"]]
    # a bare TSError (logged, no source header): one record too, as any header with two lines of message
    assert records([header[3], diagnostic, "", tserror[6], "next"]) == [[header[3], diagnostic, "", tserror[6]], ["next"]]


def test_node_trace_warnings_hint_joins_only_after_frames() -> None:
    warning = real("node_unhandled_rejection_warning_hint.txt")
    hint = warning[-1]
    assert records([*warning, hint]) == [warning, [hint]]
    assert records([warning[0], hint]) == [[warning[0]], [hint]]
    assert records(["next", hint]) == [["next"], [hint]]
