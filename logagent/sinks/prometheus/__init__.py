"""The ``prometheus_exporter`` sink: the agent's metrics for Prometheus to scrape."""
