from tests.apiserver.fixtures import apiserver, apiserver_tls  # noqa: F401
