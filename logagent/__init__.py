"""logagent: a per-node Kubernetes log agent."""

__version__ = "0.1.0"


def _import_structlog_without_rich() -> None:
    """Import structlog while ``rich`` cannot be imported.

    structlog imports rich (and with it pygments) whenever it is installed, for
    pretty tracebacks and reprs the agent never renders (its exception
    formatter is the plain one): about 5 MB resident in every agent. rich is
    the optional dependency of ``logagent top``, which imports it itself,
    later; only structlog's import is kept from it.
    """
    import sys

    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # makes "import rich" raise ImportError
    try:
        import structlog

        del structlog
    finally:
        del sys.modules["rich"]


_import_structlog_without_rich()
