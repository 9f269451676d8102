from tests.apiserver_fixtures import apiserver, apiserver_tls  # noqa: F401
