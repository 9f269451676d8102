"""Near misses of the shapes a third holdout found missing: a log line of any layout whose level is an error's,
right before the exception it logged (Akka, JUL, an MDC prefix, Celery, Airflow, sbt), and a Go dump of
goroutines without a panic. Each joins only with the trace it belongs to, every other line stays itself."""

from __future__ import annotations

from tests.test_multiline_hooks import DOTNET, TRACEBACK, alone
from tests.test_multiline_logged import records  # every batch size, the same records

JAVA = ["java.lang.NullPointerException", "\tat com.example.Main.main(Main.java:35)"]
#: the layouts of the third holdout's lines, and two more of the same kind
ERROR_LINES = [
    "[ERROR] [09/14/2016 11:51:36.120] [demo.default-dispatcher-3] [akka://demo/user/child] null",
    "SEVERE: Servlet.service() for servlet [app] threw exception with root cause",
    "[app:10.0.93.182:0000] 2021-05-24 09:15:05.823 ERROR 13728 [] [main] o.s.boot.SpringApplication : failed",
    "[2018-02-07 16:50:15,479: ERROR/ForkPoolWorker-1] Task tasks.divide[903e] raised unexpected: ZeroDivisionError()",
    "[2025-09-03, 11:47:47 PKT] {taskinstance.py:2905} ERROR - Task failed with exception",
    "2026-12-06T10:00:00Z FATAL [main] shutting down",
    "12:00:01 CRITICAL worker: lost the queue",
]


def test_a_line_with_an_error_level_of_any_layout_joins_the_exception_right_after_it() -> None:
    for line in ERROR_LINES:
        for trace in (JAVA, DOTNET, TRACEBACK):
            assert records([line, *trace, "done"]) == [[line, *trace], ["done"]], (line, trace[0])
    sbt = "[error] (run-main-0) java.lang.NoSuchMethodError: x.y()V"
    assert records([sbt, "java.lang.NoSuchMethodError: x.y()V", JAVA[1]]) == [
        [sbt, "java.lang.NoSuchMethodError: x.y()V", JAVA[1]]]


def test_a_level_in_the_message_a_warning_or_a_line_between_leaves_the_line_itself() -> None:
    for line in ["2024-01-02 10:00:00,123 INFO retry after ERROR - x", "GET /errors/ERROR 404",
                 "2026-12-06T10:00:00Z WARN [main] slow", "WARNING: low disk", "[WARN] [09/14/2016] [x] null",
                 "[2018-02-07 16:50:15,479: WARNING/ForkPoolWorker-1] task fail", "the ERROR count is 0",
                 "[ERRORS] 3", "[2025-09-03, 11:47:47 PKT] {taskinstance.py:2905} ERRORLEVEL - x"]:
        for trace in (JAVA, TRACEBACK):
            assert records([line, *trace]) == [[line], trace], (line, trace[0])
    line = ERROR_LINES[0]
    # not at once: an ordinary line, two blank lines; a header without its frame
    assert records([line, "GET / 200", *JAVA]) == [[line], ["GET / 200"], JAVA]
    assert records([line, "", "", *JAVA]) == [[line], [""], [""], JAVA]
    assert records([line, JAVA[0], "done"]) == alone([line, JAVA[0], "done"])
    assert records([line, TRACEBACK[0], "done"]) == alone([line, TRACEBACK[0], "done"])


# -- Go ---------------------------------------------------------------------------------------------------------

DUMP = ["goroutine 18 [running]:", "main.printStack()", "\t/app/main.go:23 +0x40",
        "created by main.main in goroutine 1", "\t/app/main.go:14 +0x2c", "", "goroutine 1 [semacquire]:",
        "sync.(*WaitGroup).Wait(0x140000021a0?)", "\t/usr/local/go/src/sync/waitgroup.go:116 +0x74"]


def test_a_dump_of_goroutines_without_a_panic_is_one_record() -> None:
    assert records(["started", *DUMP, "done"]) == [["started"], DUMP, ["done"]]
    assert records([*DUMP, *DUMP]) == [DUMP, DUMP]
    system = ["goroutine 1 gp=0xc000002380 m=0 mp=0x8a1b20 [running]:", *DUMP[1:3]]
    assert records([*system, "done"]) == [system, ["done"]]


def test_a_line_that_only_names_a_goroutine_stays_itself() -> None:
    for line in ["goroutine 18 [running]:", "goroutine 7 started:", "goroutine 18 [running]: waiting"]:
        assert records([line, "GET / 200"]) == [[line], ["GET / 200"]], line
    assert records(["goroutine 7 started:", *DUMP[1:3]]) == alone(["goroutine 7 started:", *DUMP[1:3]])


# -- tornado's indented traceback, .NET's blank line before the end of an inner exception ---------------------

TORNADO = ["[E 2019-09-19 21:36:03.747 JupyterHub gen:974] Exception in Future <Task finished>",
           "    Traceback (most recent call last):", '      File "/app/gen.py", line 970, in error_callback',
           "        future.result()", "    ", "    TimeoutError: Server didn't respond in 30 seconds"]


def test_tornado_s_line_takes_the_traceback_it_indented_and_nothing_after() -> None:
    assert records([*TORNADO, "[I 2019-09-19 21:36:04.001 JupyterHub log:174] 200 GET /hub/"]) == [
        TORNADO, ["[I 2019-09-19 21:36:04.001 JupyterHub log:174] 200 GET /hub/"]]
    plain = ["[E 190919 21:36:03 web:2246] 500 GET / (::1) 3.02ms", *TORNADO[1:]]
    assert records([*plain, *TORNADO]) == [plain, TORNADO]
    for line in ["[I 190919 21:36:03 web:2246] 200 GET /", "[W 190919 21:36:03 web:2246] 404 GET /x"]:
        assert records([line, *TORNADO[1:3]]) == alone([line, *TORNADO[1:3]]), line  # not an error's level
    # not a traceback right after it, or not indented as tornado indents it
    assert records([TORNADO[0], "    GET / 200", *TORNADO[1:3]]) == alone([TORNADO[0], "    GET / 200", *TORNADO[1:3]])
    assert records([TORNADO[0], *TRACEBACK]) == [[TORNADO[0]], TRACEBACK]


def test_a_blank_line_before_the_end_of_an_inner_exception_s_trace_is_part_of_it() -> None:
    aggregate = ["System.AggregateException: A Task's exception(s) were not observed.",
                 " ---> System.Net.Sockets.SocketException (11001): No such host is known.",
                 "   at System.Net.NameResolutionPal.ProcessResult(SocketError errorCode)",
                 "--- End of stack trace from previous location ---", "",
                 "   --- End of inner exception stack trace ---"]
    assert records([*aggregate, "done"]) == [aggregate, ["done"]]
    assert records([*aggregate[:5], "done"]) == [aggregate[:4], [""], ["done"]]


# -- Node: an error inspected without its stack, a property broken over lines ------------------------------------

BRACKETED = ["[TypeError: fetch failed] {", "  [cause]: Error: getaddrinfo ENOTFOUND db.example",
             "      at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:121:26) {", "    errno: -3008,",
             "    code: 'ENOTFOUND'", "  }", "}"]
INSPECTED = ["{ Error: \"value\" must be a string", "    at Object.exports.process (/app/joi.js:1:2)",
             "  isJoi: true,", "  details: ", "   [ { message: '\"value\" must be a string',", "       path: [] } ],",
             "  annotate: [Function] }"]


def test_node_s_inspected_errors_with_their_properties_are_one_record() -> None:
    assert records(["started", *BRACKETED, "done"]) == [["started"], BRACKETED, ["done"]]
    assert records([*INSPECTED, "done"]) == [INSPECTED, ["done"]]


def test_a_bracketed_line_or_an_open_property_alone_stays_itself() -> None:
    # a bracketed line that names no error, or an error's without a frame within its lead
    for first in ["[Config: loaded] {", "[TypeError: fetch failed] {"]:
        lines = [first, "  retries: 3,", "  timeout: 5", "}", "done"]
        assert records(lines) == alone(lines), first
    # a property alone ends nothing but the object; the line after the closing brace is the next record's
    assert records([*INSPECTED[:4], "GET / 200"]) == [INSPECTED[:4], ["GET / 200"]]


# -- loguru ----------------------------------------------------------------------------------------------------

LOGURU = ["2024-01-02 10:00:00.123 | ERROR    | __main__:main:10 - sync failed", "Traceback (most recent call last):",
          "", '> File "/app/w.py", line 8, in main', "    a / b", "    │   └ 0", "    └ 1", "",
          "ZeroDivisionError: division by zero"]


def test_loguru_s_line_and_traceback_with_blank_lines_and_values_are_one_record() -> None:
    assert records([*LOGURU, "2024-01-02 10:00:01.000 | INFO     | __main__:main:12 - next"]) == [
        LOGURU, ["2024-01-02 10:00:01.000 | INFO     | __main__:main:12 - next"]]
    assert records([*LOGURU[1:], *LOGURU[1:]]) == [LOGURU[1:], LOGURU[1:]]


def test_a_blank_line_after_a_frame_joins_only_if_a_frame_or_the_exception_follows() -> None:
    cut = ["Traceback (most recent call last):", '  File "/app/w.py", line 8, in main', "    a / b"]
    assert records([*cut, "", "GET / 200 in 2 ms", "done"]) == [cut, [""], ["GET / 200 in 2 ms"], ["done"]]
    assert records([*cut, "", "done", "x"]) == [cut, [""], ["done"], ["x"]]
    info = "2024-01-02 10:00:00.123 | INFO     | __main__:main:10 - retrying"
    assert records([info, *LOGURU[1:]]) == [[info], LOGURU[1:]]
