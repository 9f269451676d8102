"""The `opentelemetry` sink: OTLP/HTTP logs and its config."""
