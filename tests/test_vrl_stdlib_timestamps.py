"""Timestamp functions against Vector's VRL."""

import pytest

from logagent.vrl.value import Timestamp
from tests.vrl_function_oracle import same

STAMPS = [Timestamp(0), Timestamp(1_612_999_920_000_000_000), Timestamp(1_577_836_800_123_456_789),
          Timestamp(1_577_836_800_120_000_000), Timestamp(-86_400_000_000_001), Timestamp(1_711_846_800_000_000_000),
]
FAR = Timestamp(253_402_300_799_999_999_999)  # vrl-python panics formatting it
FORMATS = ["%d %B %Y %H:%M", "%+", "%FT%T%.f%:z", "%Y-%m-%dT%H:%M:%S%.3fZ", "%s", "%a %b %e %T %Y", "%c", "%D %r",
           "%j %U %W %V %G %g %u %w", "%-d/%-m %_H %0e", "%f %.6f %3f %9f", "%z %::z %:::z %Z", "%A %h %C %y %k %l %P %p",
           "%% %t %n", "%q", "100%", "%R %X %x %v"]


@pytest.mark.parametrize("value", STAMPS, ids=repr)
@pytest.mark.parametrize("fmt", FORMATS)
def test_format_timestamp(value, fmt):
    same("format_timestamp", value, fmt)
    for zone in ("Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC", "Nowhere/City"):
        same("format_timestamp", value, fmt, timezone=zone)


@pytest.mark.parametrize("text, fmt", [
    ("11-Feb-2021 16:00 +00:00", "%v %R %z"), ("16/10/2019 12:00:00", "%d/%m/%Y %H:%M:%S"),
    ("2020-01-01T00:00:00.123456789Z", "%+"), ("2020-01-01T00:00:00+02:00", "%+"), ("2020-01-01 10:11:12", "%F %T"),
    ("2020-01-01T10:11:12.5", "%Y-%m-%dT%H:%M:%S%.f"), ("1612999920", "%s"), ("Feb  3 04:05:06 2021", "%b %e %T %Y"),
    ("february 3 2021 4:05:06 PM", "%B %d %Y %I:%M:%S %p"), ("2021-13-01 00:00:00", "%F %T"), ("2021-02-30 00:00", "%F %R"),
    ("2021-02-03", "%F"), ("2021-02-03 04:05", "%F %H"), ("2021-02-03 04:05 extra", "%F %R"), ("2021-02-03 04", "%F %R"),
    ("x2021", "%Y"), ("2021-02-03 04:05:06 +0100", "%F %T %z"), ("2021-02-03 04:05:06 UTC", "%F %T %Z"),
    ("2021-02-03 04:05:06", "%F %T %z"), ("03/Feb/2021:04:05:06 -0700", "%d/%b/%Y:%T %z"), ("21-02-03 04:05", "%y-%m-%d %R"),
    ("2021-034 04:05", "%Y-%j %R"), ("  2021-02-03   04:05", "%F %R"), ("2021-02-03T04:05:06.123+05:30", "%Y-%m-%dT%H:%M:%S%.3f%:z"),
])
def test_parse_timestamp(text, fmt):
    same("parse_timestamp", text, fmt)
    for zone in ("Europe/Paris", "America/New_York", "Nowhere/City"):
        same("parse_timestamp", text, fmt, timezone=zone)


def test_parse_timestamp_of_a_timestamp():
    same("parse_timestamp", Timestamp(5), "%s")


@pytest.mark.parametrize("value", [*STAMPS, FAR], ids=repr)
def test_unix(value):
    same("to_unix_timestamp", value)
    for unit in ("seconds", "milliseconds", "microseconds", "nanoseconds"):
        same("to_unix_timestamp", value, unit=unit)
    assert same("to_unix_timestamp", value, unit="days")[0] == "compile"


@pytest.mark.parametrize("value", [0, 5, 5000, -5000, 1_612_999_920])
def test_from_unix(value):
    same("from_unix_timestamp", value)
    for unit in ("seconds", "milliseconds", "microseconds", "nanoseconds"):
        same("from_unix_timestamp", value, unit=unit)
