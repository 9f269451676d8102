"""parse_groks and parse_grok against Vector's VRL: every library pattern on values it takes and refuses,
patterns in order, aliases, destinations, filters, compile-time errors."""

import pytest

from tests.vrl_function_oracle import Event, outcome_of_ours, same

# (pattern name, values): each value run through %{NAME:x}, whole and inside a line
LIBRARY = [
    ("USERNAME", ["bob.smith-2_x", "bob smith", ""]),
    ("USER", ["alice", "a@b"]),
    ("INT", ["42", "-7", "+0", "4.2", "x1"]),
    ("BASE10NUM", ["3.14", "-.5", "12", "1.", "+7.0", "1e5"]),
    ("NUMBER", ["0.25", "-12", "abc"]),
    ("BASE16NUM", ["0x1F", "-ff", "12ab", "0xg"]),
    ("POSINT", ["17", "0", "007", "-3"]),
    ("NONNEGINT", ["0", "12", "-1"]),
    ("WORD", ["héllo", "foo_bar", "a b", "-"]),
    ("NOTSPACE", ["a/b:c", "a b", ""]),
    ("SPACE", ["   ", "", "\t"]),
    ("DATA", ["anything at all", ""]),
    ("GREEDYDATA", ["multi\nline", ""]),
    ("QUOTEDSTRING", ['"a \\"b\\" c"', "'single'", "`tick`", '""', '"open', "plain"]),
    ("QS", ['"x"', "x"]),
    ("UUID", ["123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400", "not-a-uuid"]),
    ("MAC", ["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e", "00:1a:2b"]),
    ("IPV4", ["10.0.0.1", "255.255.255.255", "256.1.1.1", "01.02.003.4", "1.2.3"]),
    ("IPV6", ["::1", "fe80::1%eth0", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1",
              "1:2:3:4:5:6:1.2.3.4", "1::2::3", "::", "1:2:3:4:5:6:7:8:9", "::ffff:01.2.3.4", "gggg::1"]),
    ("IP", ["192.168.1.1", "::1", "host"]),
    ("HOSTNAME", ["example.com", "a-b.c.", "a_b.com", "-bad.com", "x"]),
    ("IPORHOST", ["10.1.2.3", "my-host.local", "::1", "a b"]),
    ("HOSTPORT", ["example.com:8080", "10.0.0.1:0", "::1:80"]),
    ("URIPROTO", ["https", "svn+ssh", "1http"]),
    ("URIHOST", ["example.com:443", "10.0.0.1", "h:0"]),
    ("URIPATH", ["/a/b.html", "/a b", "/", "a/b", "/x&y=1"]),
    ("URIPARAM", ["?a=1&b=2", "?q=<x>", "a=1"]),
    ("URIPATHPARAM", ["/search?q=grok", "/p", "?q"]),
    ("URI", ["https://user:pw@example.com:8443/a/b?c=d", "http://example.com", "ftp://10.0.0.1/x", "nope"]),
    ("MONTH", ["Jan", "January", "Januar", "mar", "März", "Mrz", "Ma", "May", "Mai", "Juni", "Okt", "Ot",
               "Dezember", "Sept", "jUN"]),
    ("MONTHNUM", ["1", "09", "12", "13", "00"]),
    ("MONTHNUM2", ["09", "9", "12"]),
    ("MONTHDAY", ["1", "09", "31", "32", "00"]),
    ("DAY", ["Mon", "Thursday", "Thurs", "mon"]),
    ("YEAR", ["2024", "24", "202", "٢٠٢٤"]),
    ("HOUR", ["0", "09", "23", "24"]),
    ("MINUTE", ["00", "59", "60", "5"]),
    ("SECOND", ["59", "60", "61", "05.123", "7,5"]),
    ("TIME", ["12:34:56", "1:02:03.5", "12:34", "24:00:00"]),
    ("DATE_US", ["12/31/2024", "1-2-24", "31/12/2024"]),
    ("DATE_EU", ["31.12.2024", "1/2/24", "12/31/2024"]),
    ("DATE", ["12/31/2024", "31.12.2024", "2024-12-31"]),
    ("DATESTAMP", ["12/31/2024 23:59:59", "31.12.24-01:02:03", "12/31/2024"]),
    ("ISO8601_TIMEZONE", ["Z", "+01:00", "-0530", "+1", "UTC"]),
    ("ISO8601_SECOND", ["60", "59.9"]),
    ("TIMESTAMP_ISO8601", ["2020-10-02T23:22:12.223222Z", "2020-10-02 23:22:12,223", "2020-10-02T23:22",
                           "2020-10-02T2322+0100", "2020-13-02T23:22:12Z", "2020-10-02", "20-1-2T3:04:05-07:00"]),
    ("TZ", ["UTC", "PST", "CEST", "GMT"]),
    ("DATESTAMP_RFC822", ["Mon Jan 02 2006 15:04:05 MST", "Mon Jan 2 06 15:04:05 UTC", "Mon Jan 02 2006"]),
    ("DATESTAMP_RFC2822", ["Mon, 02 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 06 15:04:05 Z", "Mon Jan 02"]),
    ("DATESTAMP_OTHER", ["Mon Jan 02 15:04:05 MST 2006", "Mon Jan 02 2006"]),
    ("DATESTAMP_EVENTLOG", ["20240131235959", "2024013123595"]),
    ("SYSLOGTIMESTAMP", ["Oct 11 22:14:15", "Dec  5 08:19:00", "Oct 11 22:14"]),
    ("PROG", ["sshd", "kernel[1]", "a]b", "x y"]),
    ("SYSLOGPROG", ["su[123]", "cron", "su[abc]"]),
    ("SYSLOGHOST", ["mymachine", "10.0.0.99"]),
    ("SYSLOGFACILITY", ["<4.6>", "<4>"]),
    ("HTTPDATE", ["10/Oct/2000:13:55:36 -0700", "10/Oct/2000:13:55:36", "31/Mar/2021:12:04:07 +0000"]),
    ("SYSLOGBASE", ["Oct 11 22:14:15 mymachine su[123]:", "Oct 11 22:14:15 <4.6> host cron:", "Oct 11 host su:"]),
    ("LOGLEVEL", ["info", "INFO", "Info", "iNFO", "warn", "War", "WARNING", "Warning", "Waring", "err", "Error",
                  "ERROR", "ERR", "crit", "CRITICAL", "Cri", "fatal", "FATAL", "severe", "emerg", "EMERGENCY",
                  "Emergency", "EMERGency", "alert", "trace", "DEBUG", "notice", "Notice", "verbose"]),
]

DATADOG = [
    ("word", ["héllo", "a-b", "_x9"]),
    ("notSpace", ["a,b", "a b"]),
    ("data", ["x y", ""]),
    ("greedyData", ["x\ny"]),
    ("space", [" ", "", "\t\t"]),
    ("integer", ["42", "-7", "+5", "99999999999999999999", "4.2", "٣"]),
    ("integerExt", ["1e3", "-2.5e1", "12", "1e"]),
    ("number", ["3.50", "-4", "1.", ".5", "1e5", "-0"]),
    ("numberExt", ["1e5", "2.5E-3", "7", "1.5e400"]),
    ("doubleQuotedString", ['"a b"', '"a\\"b"', "'x'"]),
    ("singleQuotedString", ["'a b'", '"x"']),
    ("quotedString", ['"dq"', "'sq'", "none"]),
    ("qs", ['"q"']),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "x"]),
    ("user", ["bob.smith-1", "b ob", "ünï"]),
    ("mac", ["00:1a:2b:3c:4d:5e", "001a.2b3c.4d5e", "zz"]),
    ("ciscoMac", ["001a.2b3c.4d5e"]),
    ("windowsMac", ["00-1A-2B-3C-4D-5E"]),
    ("commonMac", ["00:1a:2b:3c:4d:5e"]),
    ("ipv4", ["127.0.0.1", "999.1.1.1"]),
    ("ipv6", ["fe80::1", "12345::"]),
    ("ip", ["::1", "8.8.8.8", "host"]),
    ("hostname", ["a-b_c.d", "_x", "example.com."]),
    ("host", ["web-1"]),
    ("ipOrHost", ["10.0.0.1", "web_1.internal"]),
    ("port", ["8080", "0", "123456", "65535"]),
    ("hostPort", ["web:80", "10.0.0.1:443", "web:0"]),
    ("uriProto", ["http", "svn+ssh", "a+b+c", "h2"]),
    ("uriHost", ["example.com:80", "example.com"]),
    ("uriPath", ["/a/b", "/x&y", "/"]),
    ("uriParam", ["?a=1&b=[2]", "?a=<b>"]),
    ("uriPathParam", ["/a?b=c"]),
    ("uri", ["http://u:p@h.com:8080/a?b=c", "git+ssh://host/repo", "x"]),
    ("boolean", ["true", "boolean"]),
]


def groks(value, *patterns, **named):
    return same("parse_groks", value, patterns=list(patterns), **named)


@pytest.mark.parametrize("name, values", LIBRARY + DATADOG, ids=[name for name, _ in LIBRARY + DATADOG])
def test_library_pattern(name, values):
    for value in values:
        groks(value, f"%{{{name}:x}}")
        groks(f"[{value}] tail", f"\\[%{{{name}:x}}\\] %{{GREEDYDATA:rest}}")
        groks(f"{value} end", f"%{{{name}:x}} %{{GREEDYDATA:rest}}")


@pytest.mark.parametrize("name, values", LIBRARY, ids=[name for name, _ in LIBRARY])
def test_parse_grok_library_pattern(name, values):
    for value in values:
        same("parse_grok", f"at {value} end", f"%{{{name}:x}}")
        same("parse_grok", value, f"^%{{{name}:x}}$")


def test_the_first_pattern_that_matches_the_whole_value_wins():
    for value in ["2020-10-02T23:22:12.223222Z info 200 Hello world", "2020-10-02T23:22:12.223222Z info Hello",
                  "info only", "2020-10-02T23:22:12Z"]:
        groks(value, "%{common_prefix} %{_status} %{_message}", "%{common_prefix} %{_message}", "",
              "%{LOGLEVEL:level} %{GREEDYDATA:rest}",
              aliases={"common_prefix": "%{_timestamp} %{_loglevel}", "_timestamp": "%{TIMESTAMP_ISO8601:timestamp}",
                       "_loglevel": "%{LOGLEVEL:level}", "_status": "%{POSINT:status}",
                       "_message": "%{GREEDYDATA:message}"})
    groks("abc", "%{word:x}x", "a%{data:y}")  # the second matches only as a whole


def test_aliases():
    groks("foo bar", "%{pair:whole}", aliases={"pair": "%{word:first} %{word:second}"})
    groks("foo bar", "%{pair}", aliases={"pair": "%{word:first} %{word:second}"})
    groks("7 x", "%{integer:n} %{WORD}", aliases={"WORD": "%{regex(\"[a-z]\"):shadowed}"})
    groks("foo", "%{dotted.name:x}", aliases={"dotted.name": "%{word}"})
    assert groks("foo", "%{a}", aliases={"a": "%{b}", "b": "%{a}"})[0] == "compile"
    assert groks("foo", "%{a}", aliases={"a": "%{a}"})[0] == "compile"


def test_destinations():
    groks("12 3.50 -4 x", "%{integer:a.b} %{number:a.c} %{number:d} %{word:e}")
    groks("12 13", "%{integer:a} %{integer:a}")
    groks("1 2 3", "%{integer:a} %{integer:a} %{integer:a}")
    groks("x y", "%{word:a.b} %{word:a}")
    groks("x y", "%{word:a} %{word:a.b}")
    groks("0 1 2 3 4 5 6 7 8 9 10", " ".join(f"%{{word:{name}}}" for name in "abcdefghijc"))
    groks("foo", "%{word:}")
    groks("foo", '%{word:a["b.c"]}')
    groks("foo bar", "%{word:@timestamp} %{word:e-http.status}")
    groks("ab", "(?<foo>a)%{regex(\"b\"):w}")
    groks("", "%{data:x}")
    groks("a", "a%{data:x}")


def test_filters():
    groks("12", "%{data::integer}")
    groks("AbC dEf", "%{word:a:lowercase} %{word:b:uppercase}")
    groks("True NotTrue", "%{word:a:boolean} %{word:b:boolean}")
    groks("- x", '%{notSpace:a:nullIf("-")} %{notSpace:b:nullIf("-")}')
    groks("1.5 3", "%{number:a:scale(10)} %{integer:b:scale(0.5)}")
    groks("x 7", "%{word:a:integer} %{integer:b:lowercase}")
    groks("%2Fservice%2Ftest", "%{data:a:decodeuricomponent}")
    groks("1e5 2.5 inf", "%{notSpace:a:number} %{notSpace:b:integerExt} %{notSpace:c:numberExt}")
    assert groks("x", "%{word:x:foo}")[0] == "compile"
    assert groks("x", "%{word:x:scale(\"a\")}")[0] == "compile"
    assert groks("x", "%{word:x:nullIf}")[0] == "compile"


def test_regex_matcher():
    groks("abc", '%{regex("[a-z]+"):x}')
    groks("٣ é", '%{regex("\\\\d"):d} %{regex("\\\\w"):w}')
    groks("a\nb", '%{regex("^b"):x}')
    groks("a\nb", 'a\n%{regex("^b$"):x}')
    groks("AB", '(?i)%{regex("ab"):x}')
    assert groks("x", "%{regex:x}")[0] == "compile"


def test_values_that_are_not_strings():
    same("parse_groks", Event(None), patterns=["%{data:x}"])
    same("parse_groks", Event(12), patterns=["%{data:x}"])
    same("parse_groks", Event("a b"), patterns=["%{word:x} %{word:y}"])


def test_compile_errors():
    for pattern in ["%{NOG:x}", "%{nope}"]:
        assert groks("foo", pattern)[0] == "compile"
    for pattern in ["%{word:x", "%{}"]:  # not a %{...}: literal text
        groks("foo", pattern)
    assert same("parse_groks", "x", patterns=[1])[0] == "compile"
    assert same("parse_groks", "x", patterns=["%{a}"], aliases={"a": 1})[0] == "compile"
    assert same("parse_grok", "x", "%{NOG}")[0] == "compile"
    assert same("parse_grok", "x", "%{word:x}")[0] == "compile"


@pytest.mark.parametrize("pattern", ["%{CISCOMAC:x}", "%{COMBINEDAPACHELOG}", "%{date(\"yyyy\"):d}",
                                     "%{data:x:json}", "%{data:x:keyvalue}", "%{unixPath:p}"])
def test_what_is_not_implemented_is_refused_by_name(pattern):
    outcome = outcome_of_ours("parse_groks", "x", patterns=[pattern])
    if pattern == "%{CISCOMAC:x}":
        assert outcome[0] != "compile"
        return
    assert outcome[0] == "compile" and "not implemented by logagent" in outcome[1], outcome


def test_parse_grok():
    same("parse_grok", "2020-10-02T23:22:12.223222Z info Hello world",
         "%{TIMESTAMP_ISO8601:timestamp} %{LOGLEVEL:level} %{GREEDYDATA:message}")
    same("parse_grok", "2020-10-02T23:22:12.223222Z an ungrokkable message",
         "%{TIMESTAMP_ISO8601:timestamp} %{LOGLEVEL:level} %{GREEDYDATA:message}")
    same("parse_grok", "2020-10-02T23:22:12.223222Z", "(%{TIMESTAMP_ISO8601:timestamp}|%{LOGLEVEL:level})")
    same("parse_grok", "a", "a%{DATA:x}")
    same("parse_grok", "xx 12 yy", "%{INT:a.b}")
    same("parse_grok", "Oct 11 22:14:15 host su[12]: hi", "%{SYSLOGBASE} %{GREEDYDATA:m}")
