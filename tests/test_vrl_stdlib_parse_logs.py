"""Log-format parsers against Vector's VRL."""

import pytest

from tests.vrl_function_oracle import same

KLOG = ["I0505 17:59:40.692994   28133 klog.go:70] hello from klog", "E1231 23:59:59.000001 1 a/b.go:1] x  ",
        "  W0101 00:00:00.000000 7 f.go:12] ", "X0505 17:59:40.692994 1 k.go:1] bad level", "not klog",
        "F0229 12:00:00.000000 9 main.go:3] leap", "I0505 17:59:40.692994 28133 klog.go:70]hello"]
COMMON = ['127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326',
          '- - - - "-" - -', '::1 - - [01/Jan/2021:00:00:00 +0000] "just text" 404 -',
          '10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a b HTTP/1.1" 200 5', "garbage",
          '1.2.3.4 - - [99/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 1']


@pytest.mark.parametrize("text", KLOG)
def test_parse_klog(text):
    same("parse_klog", text)


@pytest.mark.parametrize("text", COMMON)
def test_parse_common_log(text):
    same("parse_common_log", text)


def test_parse_common_log_timestamp_format():
    same("parse_common_log", '1.2.3.4 - - [2000-10-10 13:55:36] "GET / HTTP/1.0" 200 1', "%Y-%m-%d %H:%M:%S")


SYSLOG = ['<13>1 2020-03-13T20:45:38.119Z dynamicwireless.name non 2426 ID931 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"] Try to override',
          "<34>Oct 11 22:14:15 mymachine su[123]: 'su root' failed", "<34>Oct 11 22:14:15 mymachine su: msg",
          "Oct 11 22:14:15 mymachine kernel: msg here", "just text",
          "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM'su root' failed",
          "<190>Dec  5 08:19:00 host app[5]: x", "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time",
          '<165>1 2003-10-11T22:14:15.003Z host evntslog - ID47 [exampleSDID@32473 iut="3"][examplePriority@32473 class="high"]',
          "<13>Feb  5 17:32:18 10.0.0.99 myapp[abc]: Use the BFG!"]


@pytest.mark.parametrize("text", SYSLOG)
def test_parse_syslog(text):
    same("parse_syslog", text)
