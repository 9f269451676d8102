from tests.apiserver_fixtures import apiserver, apiserver_tls  # noqa: F401

from hypothesis import HealthCheck, settings  # noqa: E402

# Property-based tests (tests/test_properties_*.py): a CI-sized profile by
# default (seconds), ``--hypothesis-profile=long`` by hand (minutes).
settings.register_profile(
    "ci", max_examples=150, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long", max_examples=20_000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci")
