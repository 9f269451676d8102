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
          "<13>Feb  5 17:32:18 10.0.0.99 myapp[abc]: Use the BFG!", "<13>2020-03-13T20:45:38Z host app: msg",
          "2020-03-13T20:45:38.123+01:00 host app[1]: msg"]


@pytest.mark.parametrize("text", SYSLOG)
def test_parse_syslog(text):
    same("parse_syslog", text)


NGINX = [
    ("combined", '172.17.0.1 - - [31/Mar/2021:12:04:07 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/7.75.0" "-"'),
    ("combined", '172.17.0.1 - bob [31/Mar/2021:12:04:07 +0200] "POST /x HTTP/2.0" 500 0 "http://a/b" "Mozilla/5.0" "2.75"'),
    ("main", '172.24.0.1 - alice [03/Jan/2025:16:42:58 +0000] "GET / HTTP/1.1" 200 615 "http://domain.tld/path" "curl/8.11.1" "1.2.3.4, 10.10.1.1"'),
    ("main", '172.24.0.1 - - [03/Jan/2025:16:42:58 +0000] "GET / HTTP/1.1" 200 615 "-" "-" "-"'),
    ("error", '2021/04/01 13:02:31 [error] 31#31: *1 open() "/usr/share/nginx/html/not-found" failed (2: No such file or directory), client: 172.17.0.1, server: localhost, request: "POST /not-found HTTP/1.1", host: "localhost:8081"'),
    ("error", '2022/04/15 08:16:13 [error] 7164#7164: *20 limiting requests, excess: 10.000 by zone "api_access_token", client: 10.244.0.0, server: test.local, request: "GET / HTTP/2.0", host: "127.0.0.1:8080", referrer: "https://x/"'),
    ("ingress_upstreaminfo", '0.0.0.0 - bob [18/Mar/2023:15:00:00 +0000] "GET /some/path HTTP/2.0" 200 12312 "https://10.0.0.1/some/referer" "SomeUserAgent" 690 0.012 [some-upstream-service-9000] [] 10.0.50.80:9000 19437 0.011 200 752178adb17130b291aefd8c386279e7'),
    ("combined", "garbage"),
]


@pytest.mark.parametrize("fmt, text", NGINX)
def test_parse_nginx_log(fmt, text):
    same("parse_nginx_log", text, fmt)


def test_parse_nginx_log_format_is_an_enum():
    assert same("parse_nginx_log", "x", "apache")[0] == "compile"


APACHE = [
    *(("common", text) for text in COMMON),
    ("combined", '127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"'),
    ("combined", '224.92.49.50 bob frank [25/Feb/2021:12:44:08 +0000] "PATCH /one-to-one HTTP/1.1" 401 84170 - -'),
    ("combined", '10.0.0.2 - - [02/Dec/2026:10:00:01 +0000] "POST /o?id=7 HTTP/2.0" 503 19 "-" "-"'),
    ("combined", '1.2.3.4 - - [02/Dec/2026:10:00:01 +0000] "GET / HTTP/1.1" 200 5 "a \\"b\\"" "c" trailing text'),
    ("combined", '127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'),
    ("error", "[01/Mar/2021:12:00:19 +0000] [ab:alert] [pid 4803:tid 3814] [client 147.159.108.175:24259] I'll bypass it!"),
    ("error", "[01/Mar/2021:12:00:19 +0000] [ab:alert] [pid 4803:tid 3814] [client eda7:35d:3ceb:ef1e:2133:e7bf:116e:24cc:24259] v6"),
    ("error", "[Wed Oct 11 14:32:52 2000] [core:info] [pid 1234] [client 1.2.3.4:5678] AH00128: File does not exist: /x, referer http://a/b"),
    ("error", "- - - - -"),
    ("error", "[01/Mar/2021:12:00:19 +0000] [ab:alert] [pid x:tid 3] [client 1.2.3.4:5] bad pid"),
    ("error", "just text"),
]


@pytest.mark.parametrize("fmt, text", APACHE)
def test_parse_apache_log(fmt, text):
    same("parse_apache_log", text, fmt)


@pytest.mark.parametrize("text", [
    "[Fri Sep 09 10:42:29.902022 2011] [core:error] [pid 35708:tid 4328636416] [client 72.15.99.187] File does not exist: /f.ico",
    "[Wed Oct 11 14:32:52.123456 2000] [proxy:error] [pid 1234:tid 5678] (111)Connection refused: AH00957: HTTP: attempt failed",
    "[Wed Oct 11 14:32:52 2000] [-:warn] [pid 1] [client 1.2.3.4:5] msg, referer http://a/",
])
def test_parse_apache_log_threaded_error_format(text):
    same("parse_apache_log", text, "error", "%a %b %d %H:%M:%S%.f %Y")


def test_parse_apache_log_format_is_a_required_enum():
    assert same("parse_apache_log", "x", "nginx")[0] == "compile"
    assert same("parse_apache_log", "x")[0] == "compile"
