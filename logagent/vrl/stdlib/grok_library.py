"""The named grok patterns ``parse_groks`` and ``parse_grok`` know, as Python ``re`` text.

VRL's grok (a Datadog grok parser) resolves ``%{NAME}`` from a library of
Logstash patterns (upper case: ``TIMESTAMP_ISO8601``, ``LOGLEVEL``, ...) and
Datadog matchers (camel case: ``word``, ``notSpace``, ...). The definitions
here are written for this project to accept what VRL's accept (checked
against vrl-python in tests/test_vrl_stdlib_grok.py); a definition may name
another with ``%{OTHER}`` or ``%{OTHER:key}`` (a capture under ``key``, as
``SYSLOGPROG`` gives ``program`` and ``pid``). ``VRL_PATTERN_NAMES`` is every
name VRL's library has, so that one this module lacks is refused with its
name rather than reported as unknown.

The texts use what Oniguruma (VRL's engine) and ``re`` share: atomic groups,
lookbehind, ``\\w``/``\\d``/``\\s`` on Unicode; RE2 has neither of the first two.
"""

from __future__ import annotations

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])"
_HEX4 = r"[0-9A-Fa-f]{1,4}"
#: an IPv4 octet inside an IPv6 address: no leading zero there
_V6_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"


def _ipv6() -> str:
    """Eight hex groups, or fewer around one ``::``, the last two maybe a dotted IPv4; an optional ``%zone``."""
    v4 = rf"{_V6_OCTET}(?:\.{_V6_OCTET}){{3}}"
    forms = [rf"(?:{_HEX4}:){{7}}(?:{_HEX4}|:)"]
    for head in range(6, -1, -1):  # full groups before the "::" (or before the IPv4 tail)
        room = 7 - head  # groups that can still follow
        if head == 6:
            tails = [rf":{_HEX4}", v4]
        else:
            tails = [rf"(?::{_HEX4}){{1,{room}}}", rf"(?::{_HEX4}){{0,{room - 2}}}:{v4}"]
        body = "|".join(tails) + "|:"
        forms.append(rf"(?:{_HEX4}:){{{head}}}(?:{body})" if head else rf":(?:{body})")
    return "(?:" + "|".join(f"(?:{form})" for form in forms) + ")(?:%.+)?"


def _levels() -> str:
    """Log level words, each capitalised, lower or upper case (``Warn``, ``warn``, ``WARN``)."""
    stems = ("alert", "trace", "debug", "notice", "info", "war(?:n)?(?:ing)?", "er(?:r)?(?:or)?",
             "cri(?:t)?(?:ical)?", "fatal", "severe")
    forms = []
    for stem in stems:
        forms += [f"[{stem[0].upper()}{stem[0]}]{stem[1:]}", stem.upper()]
    forms += ["EMERG(?:ENCY)?", "[Ee]merg(?:ency)?"]
    return "(?:" + "|".join(forms) + ")"


_MONTH = (r"\b(?:[Jj]an(?:uary?)?|[Ff]eb(?:ruary?)?|[Mm](?:[aä]?r(?:ch|z)?|a[yi]?)|[Aa]pr(?:il)?"
          r"|[Jj]u(?:ne?|ni|ly?)|[Aa]ug(?:ust)?|[Ss]ep(?:tember)?|[Oo][ck]?t(?:ober)?|[Nn]ov(?:ember)?"
          r"|[Dd]e[cz](?:ember)?)\b")
_DAY = r"(?:Mon(?:day)?|Tue(?:sday)?|Wed(?:nesday)?|Thu(?:rsday)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
_URI_CHARS = "0-9A-Za-z_$.+!*'(){},~:;=@#%"
_MACS = {"CISCOMAC": r"(?:[0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}", "WINDOWSMAC": r"[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}",
         "COMMONMAC": r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}"}


def _hostname(label_rest: str) -> str:
    label = f"[0-9A-Za-z][{label_rest}]{{0,62}}"
    return rf"\b{label}(?:\.{label})*\.?"


#: Logstash's core patterns (VRL's ``grok.pattern``), both parse_groks and parse_grok
LOGSTASH: dict[str, str] = {
    "USERNAME": r"[0-9A-Za-z._-]+",
    "USER": "%{USERNAME}",
    "INT": r"[+-]?[0-9]+",
    "BASE10NUM": r"(?<![-+.0-9])(?>[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]+)?))",
    "NUMBER": "%{BASE10NUM}",
    "BASE16NUM": r"(?<![0-9A-Fa-f])[-+]?(?:0x)?[0-9A-Fa-f]+",
    "POSINT": r"\b[1-9][0-9]*\b",
    "NONNEGINT": r"\b[0-9]+\b",
    "WORD": r"\b\w+\b",
    "NOTSPACE": r"\S+",
    "SPACE": r"\s*",
    "DATA": r".*?",
    "GREEDYDATA": r".*",
    "QUOTEDSTRING": r"(?<!\\)(?>\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`)",
    "QS": "%{QUOTEDSTRING}",
    "UUID": r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}",
    **_MACS,
    "MAC": "(?:%{CISCOMAC}|%{WINDOWSMAC}|%{COMMONMAC})",
    "IPV6": _ipv6(),
    "IPV4": rf"(?<![0-9]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9])",
    "IP": "(?:%{IPV6}|%{IPV4})",
    "HOSTNAME": _hostname("0-9A-Za-z-"),
    "IPORHOST": "(?:%{IP}|%{HOSTNAME})",
    "HOSTPORT": "%{IPORHOST}:%{POSINT}",
    "URIPROTO": r"[A-Za-z][-+.0-9A-Za-z]+",
    "URIHOST": "%{IPORHOST}(?::%{POSINT:port})?",
    "URIPATH": f"(?:/[{_URI_CHARS}&-]*)+",
    "URIPARAM": r"\?[0-9A-Za-z_$.+!*'|(){},~@#%&/=:;?\[\]<>-]*",
    "URIPATHPARAM": "%{URIPATH}(?:%{URIPARAM})?",
    "URI": "%{URIPROTO}://(?:%{USER}(?::[^@]*)?@)?(?:%{URIHOST})?(?:%{URIPATHPARAM})?",
    "MONTH": _MONTH,
    "MONTHNUM": r"(?:0?[1-9]|1[0-2])",
    "MONTHNUM2": r"(?:0[1-9]|1[0-2])",
    "MONTHDAY": r"(?:0[1-9]|[12][0-9]|3[01]|[1-9])",
    "DAY": _DAY,
    "YEAR": r"(?:\d\d){1,2}",
    "HOUR": r"(?:2[0-3]|[01]?[0-9])",
    "MINUTE": r"[0-5][0-9]",
    "SECOND": r"(?:(?:[0-5]?[0-9]|60)(?:[:.,][0-9]+)?)",
    "TIME": r"%{HOUR}:%{MINUTE}:%{SECOND}(?![0-9])",
    "DATE_US": "%{MONTHNUM}[/-]%{MONTHDAY}[/-]%{YEAR}",
    "DATE_EU": "%{MONTHDAY}[./-]%{MONTHNUM}[./-]%{YEAR}",
    "ISO8601_TIMEZONE": "(?:Z|[+-]%{HOUR}:?%{MINUTE})",
    "ISO8601_SECOND": "(?:%{SECOND}|60)",
    "TIMESTAMP_ISO8601": "%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(?::?%{SECOND})?%{ISO8601_TIMEZONE}?",
    "DATE": "%{DATE_US}|%{DATE_EU}",
    "DATESTAMP": "%{DATE}[- ]%{TIME}",
    "TZ": r"(?:[ACEMP][DS]T|UTC)",
    "DATESTAMP_RFC822": "%{DAY} %{MONTH} %{MONTHDAY} %{YEAR} %{TIME} %{TZ}",
    "DATESTAMP_RFC2822": "%{DAY}, %{MONTHDAY} %{MONTH} %{YEAR} %{TIME} %{ISO8601_TIMEZONE}",
    "DATESTAMP_OTHER": "%{DAY} %{MONTH} %{MONTHDAY} %{TIME} %{TZ} %{YEAR}",
    "DATESTAMP_EVENTLOG": "%{YEAR}%{MONTHNUM2}%{MONTHDAY}%{HOUR}%{MINUTE}%{SECOND}",
    "SYSLOGTIMESTAMP": "%{MONTH} +%{MONTHDAY} %{TIME}",
    "PROG": r"[!-Z\\^-~]+",
    "SYSLOGPROG": r"%{PROG:program}(?:\[%{POSINT:pid}\])?",
    "SYSLOGHOST": "%{IPORHOST}",
    "SYSLOGFACILITY": "<%{NONNEGINT:facility}.%{NONNEGINT:priority}>",
    "HTTPDATE": "%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} %{INT}",
    "SYSLOGBASE": "%{SYSLOGTIMESTAMP:timestamp} (?:%{SYSLOGFACILITY} )?%{SYSLOGHOST:logsource} %{SYSLOGPROG}:",
    "LOGLEVEL": _levels(),
}

#: Datadog's matchers (VRL's ``core.pattern``), parse_groks only; ``integer``, ``number`` and their
#: ``Ext`` forms are rewritten to the ``...Str`` patterns with a filter by ``grok_rules``
DATADOG: dict[str, str] = {
    "numberStr": r"[+-]?(?>\d+(?:\.\d*)?|\.\d+)",
    "numberExtStr": r"[+-]?(?>\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?",
    "integerStr": r"[+-]?\d+",
    "integerExtStr": r"[+-]?\d+(?:[eE][+-]?\d+)?",
    "word": r"\b\w+\b",
    "doubleQuotedString": r'"[^"]*"',
    "singleQuotedString": r"'[^']*'",
    "quotedString": "(?>%{doubleQuotedString}|%{singleQuotedString})",
    "qs": "%{quotedString}",
    "uuid": "%{UUID}",
    "notSpace": r"\S+",
    "data": r".*?",
    "greedyData": r".*",
    "space": r"\s+",
    "user": r"[\w.-]+",
    "ciscoMac": "%{CISCOMAC}",
    "windowsMac": "%{WINDOWSMAC}",
    "commonMac": "%{COMMONMAC}",
    "mac": "(?:%{ciscoMac}|%{windowsMac}|%{commonMac})",
    "ipv6": "%{IPV6}",
    "ipv4": "%{IPV4}",
    "ip": "(?:%{ipv6}|%{ipv4})",
    "hostname": _hostname("0-9A-Za-z_-"),
    "host": "%{hostname}",
    "ipOrHost": "(?:%{ip}|%{host})",
    "port": r"[1-9]\d{0,4}",
    "hostPort": "%{ipOrHost}:%{port}",
    "uriProto": r"[A-Za-z]+(?:\+[A-Za-z+]+)?",
    "uriHost": "%{ipOrHost}(?::%{port})?",
    "uriPath": f"(?:/[{_URI_CHARS}-]*)+",
    "uriParam": r"\?[0-9A-Za-z_$.+!*'|(){},~@#%&/=:;?\[\]-]*",
    "uriPathParam": "%{uriPath}(?:%{uriParam})?",
    "uri": "%{uriProto}://(?:%{user}(?::[^@]*)?@)?(?:%{uriHost})?(?:%{uriPathParam})?",
}

#: what parse_groks resolves (Datadog's library holds both families)
PARSE_GROKS_LIBRARY: dict[str, str] = {**LOGSTASH, **DATADOG}

#: every pattern name of VRL's grok library (vectordotdev/vrl ``src/datadog/grok/patterns``, v0.35)
VRL_PATTERN_NAMES: frozenset[str] = frozenset(PARSE_GROKS_LIBRARY) | frozenset(
    """
BACULA_CAPACITY BACULA_DEVICE BACULA_DEVICEPATH BACULA_HOST BACULA_JOB BACULA_LOGLINE BACULA_TIMESTAMP
BACULA_VERSION BACULA_VOLUME BASE16FLOAT BIND9 BIND9_TIMESTAMP BRO_CONN BRO_DNS BRO_FILES BRO_HTTP CATALINALOG
CATALINA_DATESTAMP CISCOTAG CISCOTIMESTAMP CISCO_ACTION CISCO_DIRECTION CISCO_INTERVAL CISCO_REASON
CISCO_TAGGED_SYSLOG CISCO_XLATE_TYPE CLOUDFRONT_ACCESS_LOG COMBINEDAPACHELOG COMMONAPACHELOG CRONLOG CRON_ACTION
ELB_ACCESS_LOG ELB_REQUEST_LINE ELB_URI ELB_URIPATHPARAM EMAILADDRESS EMAILLOCALPART EXIM_DATE EXIM_EXCLUDE_TERMS
EXIM_FLAGS EXIM_HEADER_ID EXIM_INTERFACE EXIM_MSGID EXIM_MSG_SIZE EXIM_PID EXIM_PROTOCOL EXIM_QT EXIM_REMOTE_HOST
EXIM_SUBJECT HAPROXYCAPTUREDREQUESTHEADERS HAPROXYCAPTUREDRESPONSEHEADERS HAPROXYDATE HAPROXYHTTP HAPROXYHTTPBASE
HAPROXYTCP HAPROXYTIME HTTPD20_ERRORLOG HTTPD24_ERRORLOG HTTPDERROR_DATE HTTPDUSER HTTPD_COMBINEDLOG
HTTPD_COMMONLOG HTTPD_ERRORLOG JAVACLASS JAVAFILE JAVALOGMESSAGE JAVAMETHOD JAVASTACKTRACEPART JAVATHREAD
MAVEN_VERSION MCOLLECTIVE MCOLLECTIVEAUDIT MONGO3_COMPONENT MONGO3_LOG MONGO3_SEVERITY MONGO_LOG MONGO_QUERY
MONGO_SLOWQUERY MONGO_WORDDASH NAGIOSLOGLINE NAGIOSTIME NETSCREENSESSIONLOG PATH POSTGRESQL RAILS3 RAILS3FOOT
RAILS3HEAD RAILS3PROFILE RCONTROLLER REDISLOG REDISMONLOG REDISTIMESTAMP RPROCESSING RT_FLOW1 RT_FLOW2 RT_FLOW3
RT_FLOW_EVENT RUBY_LOGGER RUBY_LOGLEVEL RUUID S3_ACCESS_LOG S3_REQUEST_LINE SFW2 SHOREWALL SQUID3 SYSLOG5424BASE
SYSLOG5424LINE SYSLOG5424PRI SYSLOG5424PRINTASCII SYSLOG5424SD SYSLOGBASE2 SYSLOGLINE SYSLOGPAMSESSION TOMCATLOG
TOMCAT_DATESTAMP TTY UNIXPATH URN WINPATH path tty unixPath winPath
""".split()
)


def vrl_knows(name: str) -> bool:
    """Whether VRL's library has ``name`` (families of many names by their prefix)."""
    return name in VRL_PATTERN_NAMES or name.startswith(("CISCOFW", "NAGIOS_"))
