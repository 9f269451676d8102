"""Ruby and Rails: errors and their frames, did_you_mean and error_highlight lines, Rails' request
errors, Ruby 2.5's reversed traceback, rake's report."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, NOT, TENTATIVE, message_lines

#: a ruby frame: "app/models/x.rb:3:in `f'", "actionpack (5.1.4) lib/x.rb:63:in 'call'"
_RUBY_FRAME = r"^\s+(?:from )?\S.*:\d+:in [`']"
#: what follows a ruby frame (and an error's first line)
_RUBY_FRAMES = [
    (_RUBY_FRAME, "frames"),
    (r"^\s+from \S+:\d+$", "frames"),  # Ruby 1.8's top frame: "from x.rb:50"
    (r"^\s+\.\.\. \d+ levels\.\.\.$", "frames"),
    (BLANK, "highlight", TENTATIVE),  # error_highlight: a blank, the source line, carets
]
#: a line of the source extract of a Rails template error: "    3: <head>"
_EXTRACT = r"^\s+\d+: "
#: a frame as Rails 5 and later log it, not indented
_RAILS_FRAME = r"^\S.*:\d+:in [`']"
_DID_YOU_MEAN = r"^Did you mean\?  \S"
#: the first line of rake's report of a task's error (``rails db:migrate`` runs rake as "rails")
_RAKE_ABORTED = r"^(?:rake|rails) aborted!$"
#: what ends the message of a task's error in rake's (and ``rails db:migrate``'s) report: its first frame
#: ("/app/lib/tasks/x.rake:5:in `block in <top (required)>'", not indented), or the last lines
_RAKE_AFTER_MESSAGE = [
    (r"^\S.*:\d+:in [`']", "rake_frames"),
    (r"^Tasks: \S", "rake_tasks"),
    (r"^\(See full trace by running task with --trace\)$", END),
]

LANGUAGE = Language(
    [
        # /app/calc.rb:2:in `/': divided by 0 (ZeroDivisionError)   (also 'Integer#/' since 3.4)
        (r"^\S.*:\d+:in [`'][^`']*': ", "header"),
        # Rails: "ZeroDivisionError (divided by 0):", " NoMethodError (undefined method ...):"
        (r"^\s*[A-Z]\w*(?:::[A-Z]\w*)* \(.*\):$", "rails"),
        # Rails' error whose message runs over a line more or two, the last ending in "):"
        # ("ActionView::Template::Error (Could not find ...", "  (in /app/x.coffee)):")
        (r"^\s*(?:[A-Z]\w*::)*(?:[A-Z]\w*)?(?:Error|Exception) \(.*[^:]$", "rails_message0", 3),
        # Ruby 1.8: "x.rb:52: undefined method `errors' for nil:NilClass (NoMethodError)"
        (r"^\S+:\d+: .* \([A-Z][\w:]*(?:Error|Exception)\)$", "frames"),
        # Ruby 2.5 to 2.7 on a terminal: the oldest frame first, "\t1: from x.rb:2:in `<main>'", the error last
        (r"^Traceback \(most recent call last\):$", "oldest"),
        # rake's report of a task's error: "rake aborted!", the error's message (one or several lines,
        # "Did you mean?"), the frames not indented, "Tasks: TOP => x", "(See full trace by ...)"
        (_RAKE_ABORTED, "rake0", 0),
    ],
    {
        # did_you_mean's suggestions after the message (and after error_highlight's carets): "Did you mean?  x",
        # each further one on a line of its own under the first
        "header": [(_DID_YOU_MEAN, "suggestions"), *_RUBY_FRAMES],
        "suggestions": [(r"^ {15}\S", "suggestions"), *_RUBY_FRAMES],
        "frames": _RUBY_FRAMES,
        # the source line as it is in the file (not indented at the top level), if carets follow
        "highlight": [(r"^\s*\S", "source", TENTATIVE)],
        "source": [(r"^\s*\^+\s*$", "header")],
        # Rails 4: a whitespace-only line, then the frames indented; Rails 5 and later: the frames not
        # indented ("app/controllers/x_controller.rb:7:in 'show'", "actionpack (5.1.4) lib/x.rb:4:in 'f'");
        # a template error's source extract first ("    3: <head>")
        "rails": [(BLANK, "rails_gap", TENTATIVE), (_RUBY_FRAME, "frames"), (_EXTRACT, "extract", TENTATIVE)],
        "rails_gap": [
            (BLANK, "rails_gap", TENTATIVE),
            (_RUBY_FRAME, "frames"),
            (_EXTRACT, "extract", TENTATIVE),
            (_RAILS_FRAME, "rails_frames"),
        ],
        "rails_frames": [(_RAILS_FRAME, "rails_frames")],
        "extract": [(_EXTRACT, "extract", TENTATIVE), (BLANK, "rails_gap", TENTATIVE), (_RUBY_FRAME, "frames")],
        **message_lines("rails_message", 2, [(r"\):$", "rails", TENTATIVE)]),
        "oldest": [(r"^\s+\d+: from \S", "reversed")],  # a frame at least, then the error
        "reversed": [
            (r"^\s+\d+: from \S", "reversed"),
            (r"^\s+\.\.\. \d+ levels\.\.\.$", "reversed"),
            (r"^\S.*:\d+:in [`']", END),
        ],
        # the message: any lines but the next report's first
        **message_lines("rake", 8, _RAKE_AFTER_MESSAGE, (_RAKE_ABORTED, NOT)),
        "rake_frames": [
            *_RAKE_AFTER_MESSAGE,
            (BLANK, "rake_gap", TENTATIVE),  # the cause follows: a blank line, "Caused by:", its report
            (r"^[A-Z]\w*(?:::[A-Z]\w*)*: ", "rake1", TENTATIVE),  # rake 10: the cause's report right after
        ],
        "rake_gap": [(r"^Caused by:$", "rake0")],
        "rake_tasks": [(r"^\(See full trace by running task with --trace\)$", END)],
    },
    1,  # the error, then "\tfrom ..." or a blank line; "Traceback ...", then "\t2: from ..."
    # frames: "from x.rb:3:in ...", Ruby 2.5's "2: from ...", a Rails error's "app/x.rb:69:in 'f'"
    # (a path without spaces or colons: an ordinary line is turned down at once)
    # and a line of a Rails template error's source extract ("    3: <head>")
    indented=r"from \S|\d+: |[^\s:]+:\d+:in [`']",
    # rake's frames are not indented: its first line is marked; so is did_you_mean's line, which may
    # follow an error without frames
    marks=r"(?:rake|rails) aborted!$|Did you mean\?  ",
)
