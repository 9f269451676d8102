"""Near misses of the shapes a second holdout found missing: Serilog's line before a .NET exception, Python's
threading and unraisable hooks' line before a traceback and the notes of an exception, Go's dump on a fatal
signal, Xdebug's PHP stack (logged and displayed). Each joins only with the trace it belongs to, every other
line stays itself."""

from __future__ import annotations

from tests.test_multiline_logged import real, records  # every batch size, the same records


DOTNET = ["System.ArgumentException: Fatal weather", "   at Web.Controllers.WeatherController.Get() in /src/W.cs:line 48"]
TRACEBACK = ["Traceback (most recent call last):", '  File "/app/w.py", line 5, in poll',
             "ConnectionError: queue jobs unreachable"]


def alone(lines: list[str]) -> list[list[str]]:
    return [[line] for line in lines]


# -- Serilog ------------------------------------------------------------------------------------------------


def test_a_serilog_line_of_level_err_or_ftl_joins_the_exception_right_after_it() -> None:
    for line in ["[15:00:24 ERR] Request failed", "[15:00:24.368 FTL] Fatal weather warning [W::Get():48]",
                 "2022-01-28 08:32:11.282 +00:00 [ERR] An unhandled exception has occurred",
                 "2023-11-30 14:30:26.107 -05:00 [FTL] Host terminated unexpectedly"]:
        assert records([line, *DOTNET, "done"]) == [[line, *DOTNET], ["done"]], line


def test_a_serilog_line_of_another_level_or_not_followed_by_an_exception_stays_itself() -> None:
    for line in ["[15:00:24 INF] Request finished", "[15:00:24 WRN] Slow request",
                 "2022-01-28 08:32:11.282 +00:00 [DBG] x", "[15:00:24 Error] not u3", "[2022-01-28 08:32:11 ERR] x"]:
        assert records([line, *DOTNET]) == [[line], DOTNET], line
    err = "[15:00:24 ERR] Request failed"
    # an ordinary line, a blank line, a header without a frame after it
    assert records([err, "GET / 200", err, "", *DOTNET]) == [[err], ["GET / 200"], [err], [""], DOTNET]
    assert records([err, DOTNET[0], "done"]) == alone([err, DOTNET[0], "done"])
    assert records([err, "Error: retrying in 5s", "GET / 200"]) == alone([err, "Error: retrying in 5s", "GET / 200"])


# -- Python's hooks and notes ------------------------------------------------------------------------------------


def test_a_thread_or_unraisable_hook_line_joins_only_a_traceback_right_after_it() -> None:
    for line in ["Exception in thread Thread-1 (poll):", "Exception in thread worker:",
                 "Exception ignored in: <function Connection.__del__ at 0x7f9ea95e6340>",
                 "Exception ignored while calling deallocator <function A.__del__ at 0x7f>:"]:
        assert records([line, *TRACEBACK, "done"]) == [[line, *TRACEBACK], ["done"]], line
        assert records([line, "worker started", *TRACEBACK]) == [[line], ["worker started"], TRACEBACK], line
        assert records([line, TRACEBACK[0], "done"]) == alone([line, TRACEBACK[0], "done"]), line
    # no colon at the end, or Java's own line
    for line in ["Exception in thread pool, retrying", "Exception ignored"]:
        assert records([line, *TRACEBACK]) == [[line], TRACEBACK], line


def test_a_note_after_an_exception_line_stays_a_record_of_its_own() -> None:
    """PEP 678's notes are printed as they are after the exception's line: nothing tells one from the next line
    printed, and holding that line would hold every traceback until the line after it (left out on purpose)."""
    note = "During task with name 'model' and id '9d902d3a'"
    assert records([*TRACEBACK, note, "done"]) == [TRACEBACK, [note], ["done"]]


# -- Go ---------------------------------------------------------------------------------------------------------


def test_a_fatal_signal_joins_its_goroutines_and_registers_and_nothing_else() -> None:
    dump = real("go_sigquit_dump_registers.txt")
    assert records([*dump, "exit status 2", "done"]) == [[*dump, "exit status 2"], ["done"]]
    head = ["SIGSEGV: segmentation violation", "PC=0x7f2c1d0 m=3 sigcode=1 addr=0x0",
            "signal arrived during cgo execution", ""]
    goroutine = ["goroutine 7 [syscall]:", "runtime.cgocall(0x4b6a10, 0xc000051d58)", "\t/go/src/runtime/cgocall.go:157 +0x4b"]
    assert records([*head, *goroutine, "", "rip    0x7f2c1d0", "done"]) == [[*head, *goroutine, "", "rip    0x7f2c1d0"], ["done"]]
    # the signal's lines without a goroutine, a PC line without the signal's
    assert records(["SIGQUIT: quit", "PC=0x45c3d1 m=0 sigcode=0", "done"]) == alone(
        ["SIGQUIT: quit", "PC=0x45c3d1 m=0 sigcode=0", "done"])
    assert records(["SIGTERM: shutting down", "", *goroutine])[0] == ["SIGTERM: shutting down"]
    assert records(["SIGQUIT: quit", "", *goroutine])[0] == ["SIGQUIT: quit"]
    # registers only after a signal's goroutines: not after a panic's
    panic = real("go_nil_map.txt")
    assert records([*panic, "", "rax    0xca"])[0] == panic
    assert records([*panic, "", "rax    0xca"])[-1] == ["rax    0xca"]


# -- Xdebug -----------------------------------------------------------------------------------------------------


def test_xdebug_lines_join_only_with_their_frames() -> None:
    error = "PHP Warning:  Undefined variable $x in /app/x.php on line 7"
    frame = "PHP   1. {main}() /app/x.php:0"
    assert records([error, "PHP Stack trace:", frame, "done"]) == [[error, "PHP Stack trace:", frame], ["done"]]
    # one more line of the message, not two
    message = ["PHP Fatal error:  query failed", "SQL: [SELECT 1]", " in /app/q.php on line 1087"]
    assert records([*message[::2], "PHP Stack trace:", frame]) == [[*message[::2], "PHP Stack trace:", frame]]
    assert records([*message, "PHP Stack trace:", frame]) == alone([*message, "PHP Stack trace:", frame])
    assert records([error, "PHP Stack trace:", "done"]) == alone([error, "PHP Stack trace:", "done"])
    assert records([error, "done", "PHP Stack trace:"]) == alone([error, "done", "PHP Stack trace:"])
    assert records(["PHP Stack trace:", frame, frame]) == alone(["PHP Stack trace:", frame, frame])
    assert records(["PHP Info:  x", "PHP Stack trace:", frame]) == alone(["PHP Info:  x", "PHP Stack trace:", frame])
    shown = real("php_xdebug_display_call_stack.txt")
    assert records(["done", *shown, "done"]) == [["done"], shown, ["done"]]
    assert records([shown[0], "", "done"]) == alone([shown[0], "", "done"])
    assert records([shown[0], "", "Call Stack:", "done"]) == alone([shown[0], "", "Call Stack:", "done"])
    # an uncaught exception's display: PHP's line, a blank line, Xdebug's line of it, a blank line, the stack
    uncaught = ["Fatal error: Uncaught Error: Class 'User' not found in /app/u.php on line 10", "",
                "Error: Class 'User' not found in /app/u.php on line 10", "", *shown[2:4]]
    assert records(uncaught) == [uncaught]
