"""The name of every function VRL has (vectordotdev/vrl's ``src/stdlib``, v0.35), implemented here or not.

The compiler uses it to tell "a VRL function logagent does not implement"
from a misspelt or made-up name. ``del``, ``exists`` and ``abort`` are
special forms of the language, not functions, but VRL lists ``del`` and
``exists`` among its functions, so they are here too.
"""

VRL_FUNCTION_NAMES: frozenset[str] = frozenset(
    """
abs append array assert assert_eq basename bool camelcase ceil chunks community_id compact contains
contains_all crc decode_base16 decode_base64 decode_charset decode_gzip decode_lz4 decode_mime_q
decode_percent decode_punycode decode_snappy decode_zlib decode_zstd decrypt decrypt_ip del dirname
dns_lookup downcase encode_base16 encode_base64 encode_charset encode_csv encode_gzip encode_json
encode_key_value encode_logfmt encode_lz4 encode_percent encode_proto encode_punycode encode_snappy
encode_zlib encode_zstd encrypt encrypt_ip ends_with exists filter find flatten float floor for_each
format_int format_number format_timestamp from_entries from_unix_timestamp get get_env_var
get_hostname get_timezone_name haversine hmac http_request includes int ip_aton ip_cidr_contains
ip_ntoa ip_ntop ip_pton ip_subnet ip_to_ipv6 ipv6_to_ipv4 is_array is_boolean is_empty is_float
is_integer is_ipv4 is_ipv6 is_json is_null is_nullish is_object is_regex is_string is_timestamp join
kebabcase keys length log map_keys map_values match match_any match_array match_datadog_query md5
merge mod now object object_from_array parse_apache_log parse_aws_alb_log
parse_aws_cloudwatch_log_subscription_message parse_aws_vpc_flow_log parse_bytes parse_cbor
parse_cef parse_common_log parse_csv parse_duration parse_etld parse_float parse_glog parse_grok
parse_groks parse_influxdb parse_int parse_json parse_key_value parse_klog parse_linux_authorization
parse_logfmt parse_nginx_log parse_proto parse_query_string parse_regex parse_regex_all
parse_ruby_hash parse_syslog parse_timestamp parse_tokens parse_url parse_user_agent parse_xml
parse_yaml pascalcase pop push random_bool random_bytes random_float random_int redact remove
replace replace_with reverse_dns round screamingsnakecase seahash set sha1 sha2 sha3 shannon_entropy
sieve slice snakecase split split_path starts_with string strip_ansi_escape_codes strip_whitespace
strlen tag_types_externally tally tally_value timestamp to_bool to_entries to_float to_int to_regex
to_string to_syslog_facility to_syslog_facility_code to_syslog_level to_syslog_severity
to_unix_timestamp truncate type_def unflatten unique unnest upcase uuid_from_friendly_id uuid_v4
uuid_v7 validate_json_schema values xxhash zip
""".split()
)
