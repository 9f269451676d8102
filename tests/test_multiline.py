"""Multiline grouping: the built-in detectors on real traces, pattern mode, caps, timeouts."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logagent.event import FileContext, LogEvent
from logagent.parsers.multiline import MultilineGrouper, MultilineStats
from logagent.parsers.multiline_machine import compile_user_pattern, pattern_machine
from logagent.parsers.multiline_rules import AUTO, language_machine
from logagent.sources.multiline_choice import annotation_machine

TRACES = Path(__file__).parent / "fixtures" / "traces"
CTX = FileContext({"file": "/var/log/pods/x/app/0.log"})

#: fixture -> (the detector that must recognise it alone, the line numbers where a new trace begins)
FIXTURES = {
    "java.txt": ("java", [0, 10]),  # printStackTrace(), then an uncaught one
    "python_chained.txt": ("python", [0]),
    "go.txt": ("go", [0]),
    "ruby.txt": ("ruby", [0]),
    "nodejs_uncaught.txt": ("nodejs", [0]),
    "nodejs_logged.txt": ("nodejs", [0, 15]),  # console.error(err) twice
    "dotnet.txt": ("dotnet", [0]),
}


def trace_lines(name: str) -> list[str]:
    return (TRACES / name).read_text().split("\n")[:-1]


def traces_in(name: str) -> list[str]:
    lines = trace_lines(name)
    starts = FIXTURES[name][1]
    return ["\n".join(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)])]


def events(lines: list[str], stream: str = "stderr", ts: str = "2026-12-02T10:00:00.%09dZ") -> list[LogEvent]:
    return [LogEvent(line, stream, ts % i, CTX) for i, line in enumerate(lines)]


def grouper(machine=None, **options: int) -> MultilineGrouper:
    return MultilineGrouper(machine or language_machine(AUTO), MultilineStats(), **options)


def run(g: MultilineGrouper, evs: list[LogEvent], *, batch: int | None = None) -> list[LogEvent]:
    out: list[LogEvent] = []
    step = batch or len(evs) or 1
    for start in range(0, len(evs), step):
        out += g.feed(evs[start:start + step], CTX, 0.0)
    return out + g.flush(CTX)


def run_line_by_line(evs: list[LogEvent]) -> list[LogEvent]:
    """The reference: every record through the state machine, no shortcut."""
    g = grouper()
    out: list[LogEvent] = []
    for event in evs:
        g._take(event, CTX, 0.0, out)
    return out + g.flush(CTX)


def interleave(trace: list[str]) -> list[LogEvent]:
    """stderr: a line, the trace, a line; a stdout line after every trace line."""
    out = [LogEvent("service starting", "stderr", "t-before", CTX)]
    for i, line in enumerate(trace):
        out.append(LogEvent(line, "stderr", f"t{i:03d}", CTX))
        out.append(LogEvent(f"GET /items/{i} 200", "stdout", f"o{i:03d}", CTX))
    out.append(LogEvent("request finished", "stderr", "t-after", CTX))
    return out


# -- each language ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("detector", ["auto", "own"])
def test_each_language_trace_is_one_record_and_other_lines_are_themselves(name: str, detector: str) -> None:
    machine = language_machine(AUTO if detector == "auto" else [FIXTURES[name][0]])
    expected_traces = traces_in(name)
    lines = trace_lines(name)
    for batch in (None, 1, 3):
        out = run(grouper(machine), interleave(lines), batch=batch)
        stderr = [e.message for e in out if e.stream == "stderr"]
        stdout = [e.message for e in out if e.stream == "stdout"]
        assert stderr == ["service starting", *expected_traces, "request finished"], (name, batch)
        assert stdout == [f"GET /items/{i} 200" for i in range(len(lines))]
        first = next(e for e in out if e.message == expected_traces[0])
        assert first.timestamp == "t000"  # the first line's


def test_two_java_traces_in_a_row_are_two_records() -> None:
    out = run(grouper(), events(trace_lines("java.txt")))
    assert [m.message.split("\n")[0] for m in out] == [
        "java.lang.IllegalStateException: cannot load config",
        'Exception in thread "main" java.lang.IllegalStateException: cannot load config',
    ]
    assert [m.message.count("\n") + 1 for m in out] == [10, 10]
    assert all(m.message.endswith("\t... 3 more") for m in out)


def test_a_detector_ignores_other_languages() -> None:
    lines = trace_lines("python_chained.txt")
    out = run(grouper(language_machine(["java"])), events(lines))
    assert len(out) == len(lines)


PYTHON_PROGRAMS = {
    "simple": "def f(x):\n    return 1 / x\nf(0)\n",
    "from": "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad key') from e\n",
    "during_handling": "try:\n    int('x')\nexcept ValueError:\n    None.attr\n",
    "exception_group": "raise ExceptionGroup('many', [ValueError(1), TypeError(2)])\n",
    "syntax_error": "compile('def f(:\\n  pass', 'mod.py', 'exec')\n",
    # errors in the script's own code: reported without a traceback
    "syntax_error_in_script": "while True print('x')\n",
    "indentation_error_in_script": "x = 1\n    y = 2\n",
    "tab_error_in_script": "if True:\n        x = 1\n\ty = 2\n",
    "recursion": "def f(n):\n    return f(n + 1)\nf(0)\n",
}


@pytest.mark.parametrize("program", sorted(PYTHON_PROGRAMS))
def test_python_tracebacks_written_by_python(program: str, tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(PYTHON_PROGRAMS[program])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    trace = result.stderr.rstrip("\n")
    out = run(grouper(), interleave(trace.split("\n")))
    assert [e.message for e in out if e.stream == "stderr"] == ["service starting", trace, "request finished"]


JAVA_PROGRAM = """
public class App {
    static void deep(int n) { if (n == 0) throw new UnsupportedOperationException("deep"); deep(n - 1); }
    public static void main(String[] args) {
        try { deep(3); } catch (RuntimeException e) { new IllegalStateException("wrapped", e).printStackTrace(); }
        Exception suppressed = new Exception("outer");
        suppressed.addSuppressed(new java.io.IOException("closing failed"));
        suppressed.printStackTrace();
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on this machine")
def test_java_traces_written_by_java(tmp_path: Path) -> None:
    source = tmp_path / "App.java"
    source.write_text(JAVA_PROGRAM)
    result = subprocess.run(["java", str(source)], capture_output=True, text=True, timeout=120)
    lines = result.stderr.rstrip("\n").split("\n")
    out = run(grouper(language_machine(["java"])), events(lines))
    assert [e.message.split("\n")[0] for e in out] == [
        "java.lang.IllegalStateException: wrapped",
        "java.lang.Exception: outer",
    ]
    assert "\n".join(e.message for e in out) == "\n".join(lines)
    assert "\tSuppressed: java.io.IOException: closing failed" in out[1].message


NODE_PROGRAM = """
class ValidationError extends Error {}
console.error(new ValidationError('field "name" is required'));
Promise.reject(new RangeError('out of range'));
"""


NODE_VM_PROGRAM = """
const vm = require('vm');
vm.runInNewContext("let a = 1;\\nfoo.bar(a);\\n");
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_uncaught_errors_of_vm_and_eval_code_written_by_node(tmp_path: Path) -> None:
    """The header names the code's place: "evalmachine.<anonymous>:2" (vm), "[eval]:1" (node -e)."""
    script = tmp_path / "vm.js"
    script.write_text(NODE_VM_PROGRAM)
    for args in (["node", str(script)], ["node", "-e", "undefinedFn()"]):
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
        trace = result.stderr.rstrip("\n")
        assert result.returncode == 1 and "\n    at " in trace, trace
        out = run(grouper(), interleave(trace.split("\n")))
        assert [e.message for e in out if e.stream == "stderr"] == ["service starting", trace, "request finished"]


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_traces_written_by_node(tmp_path: Path) -> None:
    script = tmp_path / "app.js"
    script.write_text(NODE_PROGRAM)
    result = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=120)
    lines = result.stderr.rstrip("\n").split("\n")
    out = run(grouper(language_machine(["nodejs"])), events(lines))
    heads = [e.message.split("\n")[0] for e in out]
    assert heads[0] == 'ValidationError: field "name" is required'
    assert len([e for e in out if "\n    at " in e.message]) == 2, heads
    assert "\n".join(e.message for e in out) == "\n".join(lines)


# -- blank lines, order, timestamps ----------------------------------------------------------


def test_blank_lines_after_a_trace_are_not_part_of_it() -> None:
    go = trace_lines("go.txt")
    py = trace_lines("python_chained.txt")
    lines = [*go, "", "", "server stopped", *py, "", "next request"]
    out = run(grouper(), events(lines))
    assert [e.message for e in out] == ["\n".join(go), "", "", "server stopped", "\n".join(py), "", "next request"]


def test_blank_lines_after_an_aggregate_exception_or_a_rake_report_are_not_part_of_it() -> None:
    """A blank line can go on with a .NET trace (the next ``---> (Inner Exception #N)``) or a rake report
    (``Caused by:``) but joins only if that follows."""
    dotnet = real_trace("dotnet_aggregate_blank_separated.txt")
    rake = real_trace("ruby_rake_aborted_rakefile.txt")
    # rake's report with --trace: no "(See full trace ...)" line, the frames last
    traced = ["rake aborted!", "NoMethodError: undefined method `x' for nil", "/app/Rakefile:3:in `block in <top>'"]
    lines = [*dotnet, "", "", "next request", *rake, "", "Caused by", *traced, "", "rake aborted!", *traced[1:]]
    out = run(grouper(), events(lines))
    assert [e.message for e in out] == ["\n".join(dotnet), "", "", "next request", "\n".join(rake), "",
                                        "Caused by", "\n".join(traced), "", "\n".join(traced)]


def test_pieces_of_node_dotnet_and_rake_reports_out_of_place_are_themselves() -> None:
    lines = ["Tasks: TOP => db:migrate", "(See full trace by running task with --trace)", "<---", "Require stack:",
             "- /app/index.js", "cache warm", "V8 errors stack trace", "worker started", "Error: Cannot find module 'x'",
             "- /app/index.js", "rake aborted!", "rake aborted!", "GET / 200", "done",
             # a log line of level ERROR or WARN, then an exception without frames
             "2026-12-02 10:00:00.001 ERROR [exec-1] c.x.Service - failed", "java.io.IOException: disk full", "done",
             "16:15:13.201 [main] WARN c.x.Daemon - retrying", "Error: connection reset by peer", "done"]
    for batch in (None, 1, 3):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == lines, batch


#: ASP.NET Core's console logger: its line, its message, then the exception indented
ASPNET_FAIL = ["fail: Microsoft.AspNetCore.Diagnostics.DeveloperExceptionPageMiddleware[1]",
               "      An unhandled exception has occurred while executing the request.",
               "      System.InvalidOperationException: boom", "         at Web.Program.Main()"]


def test_a_dotnet_message_after_a_blank_line_joins_only_if_a_frame_follows_within_three_lines() -> None:
    """Npgsql's "23503: x", "", "DETAIL: y" (a header's message that goes on after a blank line): the blank
    line and up to three lines after it join when a frame (an inner exception, ...) follows; a trace
    followed by a blank line and another line keeps neither, nor does a header whose frame comes too late."""
    npgsql = real_trace("dotnet_npgsql_exception_data.txt")
    header = "Npgsql.PostgresException (0x80004005): 42P01: relation \"orders\" does not exist"
    frame = "   at Npgsql.Internal.NpgsqlConnector.ReadMessageLong(Boolean async)"
    thrown = [header, "", "POSITION: 15", frame, "   at Shop.Program.Main()"]
    lines = [*npgsql, "", "Process finished with exit code -532,462,766.",
             *thrown, "", "next request",
             header, "", "DETAIL: a", "b", "c", "d", frame,  # four lines after the blank: too many
             header, "", "DETAIL: a", "GET / 200",  # no frame follows
             header, "", "java.io.IOException: disk full", "\tat x.Y.z(Y.java:1)",  # the next trace's header
             header, "", *ASPNET_FAIL]  # an indented line is no line of the message
    for batch in (None, 1, 2, 5):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            "\n".join(npgsql), "", "Process finished with exit code -532,462,766.",
            "\n".join(thrown), "", "next request",
            header, "", "DETAIL: a", "b", "c", "d", frame,
            header, "", "DETAIL: a", "GET / 200",
            header, "", "\n".join(["java.io.IOException: disk full", "\tat x.Y.z(Y.java:1)"]),
            header, "", "\n".join(ASPNET_FAIL)], batch  # the console logger's whole entry, not the header's


def test_npgsql_exception_data_joins_only_after_its_header_line() -> None:
    """"  Exception data:" and its "    Key: value" lines after a frame; an indented line of another shape
    after them (a YAML dump's) ends the trace, and the same lines out of place are themselves."""
    trace = ["Npgsql.PostgresException (0x80004005): 23505: duplicate key value violates unique constraint \"pk\"",
             "   at Npgsql.Internal.NpgsqlConnector.ReadMessageLong(Boolean async)", "  Exception data:",
             "    Severity: ERROR", "    SqlState: 23505", "    ConstraintName: pk"]
    lines = [*trace, "    port: 8080", "  Exception data:", "    Severity: ERROR", "done"]
    for batch in (None, 1, 3):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            "\n".join(trace), "    port: 8080", "  Exception data:", "    Severity: ERROR", "done"], batch


MONO_OUTPUT = [  # Mono 6.8 (Debian), an uncaught exception: the report, then the runtime's log line of it
    "Unhandled Exception:",
    "System.IndexOutOfRangeException: Index was outside the bounds of the array.",
    "  at Program.Main () [0x00007] in <6107a5064f4f4f9a93ff705165d69371>:0 ",
    "[ERROR] FATAL UNHANDLED EXCEPTION: System.IndexOutOfRangeException: Index was outside the bounds of the array.",
    "  at Program.Main () [0x00007] in <6107a5064f4f4f9a93ff705165d69371>:0 ",
]


def test_mono_unhandled_exception_line_joins_only_a_header_and_its_frames() -> None:
    lines = ["", *MONO_OUTPUT, "Unhandled Exception:", "GET / 200", "Unhandled Exception:",
             "System.Exception: boom", "GET / 200", "Unhandled Exception:", "", "System.Exception: boom"]
    for batch in (None, 1, 2, 3):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            "", "\n".join(MONO_OUTPUT[:3]), "\n".join(MONO_OUTPUT[3:]), "Unhandled Exception:", "GET / 200",
            "Unhandled Exception:", "System.Exception: boom", "GET / 200", "Unhandled Exception:", "",
            "System.Exception: boom"], batch


def test_pieces_of_uncaught_headers_and_syntax_error_reports_out_of_place_are_themselves() -> None:
    """A Node header without its caret, a Python SyntaxError report without its error line, a ruby
    did_you_mean line without an error before it: every line is its own record."""
    lines = ["evalmachine.<anonymous>:3", "foo.bar(a);", "cache warm", "[eval]:1", "", "ReferenceError: x",
             '  File "/app/x.py", line 3', "    def f(:", "          ^", "GET / 200",
             '  File "/app/x.py", line 3', "    y = 2", "done",
             '  File "/app/x.py", line 3, in f', "SyntaxError: invalid syntax",  # a traceback's frame: no report
             "Did you mean?  String", "               Strings", "worker started"]
    for batch in (None, 1, 3):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == lines, batch


def test_ruby_did_you_mean_and_its_suggestions_join_the_error_before_them() -> None:
    """did_you_mean's lines go with the error (after its first line or error_highlight's carets), with or
    without frames after them; a line indented as a suggestion after the frames does not, nor do a blank
    line and an unindented line after a trace without the carets that would make it error_highlight's."""
    error = ["-e:1:in `<main>': uninitialized constant Strng (NameError)", "Did you mean?  String",
             "               Strings"]
    highlighted = real_trace("ruby_did_you_mean_after_highlight.txt")
    lines = [*error, "GET / 200", *highlighted, "               Strings", *error[:1], "", "Strng.new", "done"]
    for batch in (None, 1, 2, 5):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            "\n".join(error), "GET / 200", "\n".join(highlighted), "               Strings", error[0], "",
            "Strng.new", "done"], batch


def test_a_log_line_joins_the_exception_it_logged_only_if_at_follows_within_two_lines() -> None:
    logged = "16:15:13.201 [main] ERROR c.x.Daemon - crashing!"
    short = real_trace("java_npe_helpful.txt")  # the header, then "at"
    long = real_trace("java_multiline_message.txt")  # the header, two lines of message, then "at"
    lines = [logged, *short, logged, *long, "done"]
    for batch in (None, 1, 2, 5):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            "\n".join([logged, *short]), logged, "\n".join(long), "done"], batch


def test_a_python_logger_line_joins_the_traceback_only_if_of_error_level_and_right_before_it() -> None:
    """An INFO or WARNING line before a traceback stays itself, as does an error line followed by anything but
    a traceback's first line and a frame; the traceback is one record either way."""
    traceback = real_trace("python_from.txt")
    for line in ["INFO:root:retrying", "WARNING:app.db:slow query", "2024-01-02 10:00:00,123 - app - INFO - done",
                 "[2025-05-04 03:09:16,109] INFO in app: GET /", "INFO:     127.0.0.1:5000 - \"GET / HTTP/1.1\" 200",
                 "Bad Request: /polls/", "2024-01-02 10:00:00,123 INFO retry after ERROR - x"]:
        for batch in (None, 1, 2):
            assert [e.message for e in run(grouper(), events([line, *traceback]), batch=batch)] == [
                line, "\n".join(traceback)], (line, batch)
    logged = ["ERROR:root:sync failed", "Traceback (most recent call last):", "worker started",
              "Task exception was never retrieved", "future: <Task finished coro=<f() done>>", "GET / 200",
              "Internal Server Error: /polls/", "", *traceback[:1], "done"]
    for batch in (None, 1, 2):
        assert [e.message for e in run(grouper(), events(logged), batch=batch)] == logged, batch


def test_a_log_line_after_an_exception_group_is_not_part_of_it() -> None:
    """The line after a group's closing border begins the next record (an error line may join the
    traceback after it); the border of a group inside it is followed by the group's next exception."""
    group = real_trace("python_logged_group_siblings.txt")
    traceback = real_trace("python_from.txt")
    for line in ["WARNING:root:retrying in 5s", "INFO:uvicorn.access:127.0.0.1 GET / 200", "ERROR:root:again"]:
        for batch in (None, 1, 3):
            assert [e.message for e in run(grouper(), events([*group, line, "done"]), batch=batch)] == [
                "\n".join(group), line, "done"], (line, batch)
            assert [e.message for e in run(grouper(), events([*group, line, *traceback]), batch=batch)] == [
                "\n".join(group), "\n".join([line, *traceback]) if line.startswith("ERROR") else line,
                *([] if line.startswith("ERROR") else ["\n".join(traceback)])], (line, batch)


def test_rails_errors_join_frames_not_indented_only_after_the_blank_line_and_an_extract_only_with_frames() -> None:
    header = "NameError (uninitialized constant ArticlesController::Article):"
    frame = "app/controllers/articles_controller.rb:7:in `show'"
    lines = [header, frame, header, "  ", "Completed 500 Internal Server Error in 5ms",
             "ActionView::Template::Error (undefined method `x'", "  for nil):", "    3: <head>", "done", "  ",
             frame]
    for batch in (None, 1, 2, 5):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == lines, batch


def test_a_laravel_entry_joins_its_stacktrace_and_previous_exceptions_and_no_other_entry() -> None:
    entry = real_trace("php_laravel_monolog_stacktrace.txt")
    chained = [*entry[:-1], "", "[previous exception] [object] (PDOException(code: 0): gone at /app/a.php:1)",
               "[stacktrace]", "#0 /app/a.php(3): f()", "#1 {main}", entry[-1]]
    plain = "[2025-10-09 19:10:08] production.ERROR: quota exceeded"
    info = "[2025-10-09 19:10:08] production.INFO: started"
    lines = [plain, *entry, info, *entry[1:], plain, "[stacktrace]", "done", plain, "", "x", *chained]
    for batch in (None, 1, 2, 5):
        assert [e.message for e in run(grouper(), events(lines), batch=batch)] == [
            plain, "\n".join(entry), info, *entry[1:], plain, "[stacktrace]", "done", plain, "", "x",
            "\n".join(chained)], batch


def real_trace(name: str) -> list[str]:
    return (TRACES / "real" / name).read_text().split("\n")[:-1]


def test_record_is_truncated_if_a_line_was_and_keeps_the_first_timestamp() -> None:
    lines = trace_lines("ruby.txt")
    evs = events(lines)
    evs[2] = LogEvent(evs[2].message, "stderr", evs[2].timestamp, CTX, True)
    (record,) = run(grouper(), evs)
    assert record.truncated and record.timestamp == evs[0].timestamp and record.stream == "stderr"


def test_records_held_across_a_metadata_change_get_the_new_context() -> None:
    g = grouper()
    lines = trace_lines("dotnet.txt")
    assert g.feed(events(lines), CTX, 0.0) == []
    newer = FileContext({"file": "/var/log/pods/x/app/0.log", "kubernetes": {"pod_labels": {"v": "2"}}})
    (record,) = g.flush(newer)
    assert record.ctx is newer


def test_shortcut_for_batches_without_indented_lines_gives_the_same_records() -> None:
    """The cheap path (only each stream's last line may open a group) never changes the result."""
    pieces = [trace_lines(name) for name in sorted(FIXTURES)]
    pieces += [(TRACES / "real" / path.name).read_text().split("\n")[:-1] for path in sorted((TRACES / "real").glob("*.txt"))]
    plain_lines = ["GET / 200", "user logged in", "Error: retrying in 5s", "cache warm",
                   "Traceback (most recent call last):", "panic: not really", "worker TimeoutError",
                   # pieces of traces out of place, blank and indented lines that are no trace
                   "", "  note: indented, not a trace", "Caused by: java.io.IOException: disk full",
                   "goroutine 7 [running]:", "main.main()", "/app/server.js:12",
                   "During handling of the above exception, another exception occurred:",
                   "#1 {main}", "Unhandled exception:", "thread 'main' panicked at src/main.rs:2:5:",
                   "Stack trace:", "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                   " ActionController::RoutingError (No route matches [GET] \"/x\"):", "node:fs:573",
                   "rake aborted!", "Require stack:", "- /app/index.js", "V8 errors stack trace", "<---",
                   " ---> (Inner Exception #1) System.Exception: x", "Tasks: TOP => db:migrate",
                   "16:15:13.201 [main] ERROR c.x.Daemon - crashing!", "Unhandled Exception:",
                   "evalmachine.<anonymous>:3", "[eval]:1", '  File "/app/x.py", line 3', "    y = 2", "   ^",
                   "SyntaxError: invalid syntax", "Did you mean?  String", "               Strings",
                   "  Exception data:", "    SqlState: 23503", "DETAIL: Key (id)=(1) already exists.",
                   "   --- End of inner exception stack trace ---", "ERROR:root:sync failed",
                   "ERROR:    Exception in ASGI application", "Internal Server Error: /polls/",
                   "Task exception was never retrieved", "future: <Task finished coro=<f() done>>",
                   "2022-06-01 19:37:14,799 - asyncio - ERROR - Task exception was never retrieved",
                   "    +------------------------------------", "NameError (uninitialized constant X):",
                   "app/controllers/x_controller.rb:7:in `show'", "ActionView::Template::Error (x",
                   "  (in /app/x.coffee)):", "    3: <head>", "[2025-10-09 19:10:09] production.ERROR: x",
                   "[stacktrace]", "#0 /app/artisan(13): handle()", '"} ',
                   "2018-08-28 09:01:19.390 ERROR 8816 --- [main] o.s.boot.SpringApplication : Application run failed",
                   "18/04/09 09:30:52 ERROR Executor: Exception in task 1.0 in stage 0.0 (TID 1)",
                   "Driver stacktrace:", "\t(Coroutine boundary)", " in 'reader', line 3, column 14:",
                   "[UnhandledPromiseRejection: x] {", "  code: 'ERR_UNHANDLED_REJECTION'", "}", "HttpError [Error]: x",
                   "TSError: \u2a2f Unable to compile TypeScript:", "x.ts(1,10): error TS2305: no member 'y'.",
                   "(Use `node --trace-warnings ...` to show where the warning was created)",
                   "fail: Microsoft.AspNetCore.Server.Kestrel[13]", "crit: App.Worker[0]",
                   '      Connection id "0HN": An unhandled exception was thrown by the application.',
                   "      => SpanId:a2, TraceId:7d => RequestPath:/throw", "      order 42 failed",
                   "      System.InvalidOperationException: boom",
                   "[15:00:24.368 FTL] Fatal weather warning", "[15:00:24 ERR] x",
                   "2022-01-28 08:32:11.282 +00:00 [ERR] An unhandled exception has occurred",
                   "Exception in thread worker:", "Exception ignored in: <function A.__del__ at 0x7f>",
                   "while loading the settings of tenant 'acme'", "SIGQUIT: quit", "PC=0x45c3d1 m=0 sigcode=0",
                   "signal arrived during cgo execution", "rax    0xca", "gs     0x0",
                   "PHP Fatal error:  Allowed memory size exhausted in /app/x.php on line 8", "PHP Stack trace:",
                   "PHP   1. {main}() /app/x.php:0", "Notice: Undefined variable: x in /app/x.php on line 7",
                   "Call Stack:", "    0.0010     393200   1. {main}() /app/x.php:0"]
    rng = random.Random(14)
    for _ in range(150):
        evs: list[LogEvent] = []
        for _ in range(30):
            stream = rng.choice(["stdout", "stderr"])
            chosen = rng.choice(pieces) if rng.random() < 0.15 else [rng.choice(plain_lines)]
            evs += [LogEvent(line, stream, f"t{len(evs)}", CTX) for line in chosen]
        reference = run_line_by_line(evs)
        for batch in (1, 2, 3, 7, 50, len(evs)):
            got = run(grouper(), evs, batch=batch)
            for stream in ("stdout", "stderr"):  # the order across streams may differ
                assert by_stream(got, stream) == by_stream(reference, stream), batch


def test_shortcut_finds_the_other_streams_last_record_far_back() -> None:
    py = trace_lines("python_chained.txt")
    for where in (0, 3, 150):
        batch = [LogEvent(f"GET /{i} 200", "stdout", f"o{i}", CTX) for i in range(200)]
        batch.insert(where, LogEvent(py[0], "stderr", "e0", CTX))
        g = grouper()
        out = g.feed(batch, CTX, 0.0)
        assert len(out) == 200 and g.open, where
        rest = g.feed(events(py[1:]) + [LogEvent("next", "stderr", "e9", CTX)], CTX, 0.0)
        assert [e.message for e in rest] == ["\n".join(py), "next"]


def by_stream(out: list[LogEvent], stream: str) -> list[tuple[str, str | None]]:
    return [(e.message, e.timestamp) for e in out if e.stream == stream]


# -- caps and timeout -----------------------------------------------------------------------------


def test_max_lines_splits_a_group_and_loses_nothing() -> None:
    lines = trace_lines("nodejs_logged.txt")[:15]  # one trace of 15 lines
    g = grouper(max_lines=4)
    out = run(g, events(lines))
    assert [e.message.count("\n") + 1 for e in out] == [4, 4, 4, 3]
    assert "\n".join(e.message for e in out) == "\n".join(lines)
    assert g.stats.splits == 3 and g.stats.records == 4


def test_max_bytes_splits_a_group_and_loses_nothing() -> None:
    lines = trace_lines("java.txt")[:10]
    g = grouper(max_bytes=200)
    out = run(g, events(lines))
    assert all(len(e.message) <= 200 for e in out)
    assert len(out) > 1 and g.stats.splits == len(out) - 1
    assert "\n".join(e.message for e in out) == "\n".join(lines)


def test_idle_group_is_emitted_after_timeout() -> None:
    g = grouper(timeout_ms=1000)
    lines = trace_lines("go.txt")
    assert g.feed(events(lines), CTX, 100.0) == []
    assert g.open
    assert g.expire(100.9, CTX) == []
    (record,) = g.expire(101.0, CTX)
    assert record.message == "\n".join(lines)
    assert not g.open and g.stats.timeouts == 1


def test_timeout_counts_from_the_last_line_that_joined() -> None:
    g = grouper(timeout_ms=1000)
    lines = trace_lines("ruby.txt")
    g.feed(events(lines[:2]), CTX, 10.0)
    g.feed(events(lines[2:]), CTX, 10.8)
    assert g.expire(11.5, CTX) == []
    assert len(g.expire(11.8, CTX)) == 1


# -- pattern mode ------------------------------------------------------------------------------------


def pattern(start: str, condition: str | None = None, mode: str | None = None) -> MultilineGrouper:
    cond = compile_user_pattern(condition, "condition_pattern") if condition else None
    return grouper(pattern_machine(compile_user_pattern(start, "start_pattern"), cond, mode))  # type: ignore[arg-type]


CUSTOM = [
    "orphan line",
    "[2026-12-02 10:00:00] INFO order 1 accepted",
    "  items: 3",
    "  total: 12.50",
    "[2026-12-02 10:00:01] WARN order 2 delayed",
    "[2026-12-02 10:00:02] INFO order 3 accepted",
    "  items: 1",
]


def messages(out: list[LogEvent]) -> list[str]:
    return [e.message for e in out]


def test_pattern_start_only_groups_a_custom_format() -> None:
    out = run(pattern(r"^\[\d{4}-\d{2}-\d{2} "), events(CUSTOM))
    assert messages(out) == [
        "orphan line",
        "\n".join(CUSTOM[1:4]),
        CUSTOM[4],
        "\n".join(CUSTOM[5:7]),
    ]


def test_pattern_continue_through() -> None:
    out = run(pattern(r"^\[", r"^\s", "continue_through"), events(CUSTOM + ["not indented"]))
    assert messages(out) == ["orphan line", "\n".join(CUSTOM[1:4]), CUSTOM[4], "\n".join(CUSTOM[5:7]), "not indented"]


def test_pattern_continue_past() -> None:
    lines = ["start: a \\", "b \\", "c", "d", "start: e"]
    out = run(pattern(r"^start:", r"\\$", "continue_past"), events(lines))
    assert messages(out) == ["start: a \\\nb \\\nc", "d", "start: e"]


def test_pattern_halt_before() -> None:
    lines = ["BEGIN x", "1", "2", "END", "BEGIN y", "3"]
    out = run(pattern(r"^BEGIN", r"^(BEGIN|END)", "halt_before"), events(lines))
    assert messages(out) == ["BEGIN x\n1\n2", "END", "BEGIN y\n3"]


def test_pattern_halt_with() -> None:
    lines = ["BEGIN x", "1", "END", "after", "BEGIN y", "2", "END"]
    out = run(pattern(r"^BEGIN", r"^END$", "halt_with"), events(lines))
    assert messages(out) == ["BEGIN x\n1\nEND", "after", "BEGIN y\n2\nEND"]


def test_user_patterns_use_rust_syntax_and_name_the_key_when_invalid() -> None:
    search = compile_user_pattern(r"^(?<level>[A-Z]+) \d", "start_pattern")
    assert search("WARN 1") and not search("warn 1")
    with pytest.raises(ValueError, match=r"^start_pattern: invalid regex at column \d+: "):
        compile_user_pattern("^(unclosed", "start_pattern")
    with pytest.raises(ValueError, match=r"^condition_pattern: invalid regex .*look-around"):
        compile_user_pattern("(?=x)", "condition_pattern")


# -- annotation values --------------------------------------------------------------------------------


def test_annotation_values() -> None:
    assert annotation_machine("none") is None
    assert annotation_machine("auto") is language_machine(AUTO)
    assert annotation_machine(" Java ") is language_machine(["java"])
    assert annotation_machine("python,go") is language_machine(["go", "python"])
    assert annotation_machine("javascript") is language_machine(["nodejs"])
    assert annotation_machine("php,dart,rust") is language_machine(["dart", "php", "rust"])
    for bad in ("", "cobol", "java,", "pattern"):
        if bad == "java,":
            assert annotation_machine(bad) is language_machine(["java"])
            continue
        with pytest.raises(ValueError, match="expected none, auto or some of"):
            annotation_machine(bad)
