"""HTTP receivers that check each backend's wire format, for the tests and the benchmarks (not in the wheel).

``receivers.ndjson``: the ``http`` sink's bodies (ndjson, gzip, zstd), with
answer plans (status codes, delays, Retry-After) on demand.
``receivers.backends``: Elasticsearch ``_bulk``, Loki push and OTLP/HTTP
logs receivers on the same machinery. Either runs standalone for the
benchmarks: ``python -m receivers.ndjson --port 8080``.
"""
