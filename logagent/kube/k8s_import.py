"""Import kubernetes-asyncio's configuration loaders and ApiClient without its
API and model classes.

Importing any part of ``kubernetes_asyncio`` runs the package ``__init__``,
which imports ``kubernetes_asyncio.client``, whose ``__init__`` imports every
API class and every model class (about 1,200 modules, ~38 MB of RSS). The agent
needs only ``Configuration``, the config loaders (kubeconfig, in-cluster, exec,
OIDC) and ``ApiClient``/``rest`` for raw requests, since it decodes responses
itself with msgspec.

:func:`import_kubernetes_asyncio` registers the three heavy packages
(``kubernetes_asyncio``, ``.client`` and ``.client.models``) in ``sys.modules``
as *deferred* packages: real module objects with the real ``__spec__`` and
``__path__``, so their submodules import normally, but whose ``__init__`` code
runs only on first access to an attribute that is neither already set nor a
submodule. Code elsewhere in the process that uses, say,
``kubernetes_asyncio.client.CoreV1Api`` therefore still works; it just pays the
import cost at that moment instead of the agent paying it always.

If ``kubernetes_asyncio`` is already imported, nothing is changed.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

_PUBLIC_DUNDERS = frozenset({"__version__", "__project__", "__all__"})
_HEAVY_PACKAGES = ("kubernetes_asyncio", "kubernetes_asyncio.client", "kubernetes_asyncio.client.models")
#: imported by ``client.configuration`` at its top but used only for HTTP basic
#: auth headers (``urllib3.util.make_headers``): deferred too (~1.2 MB of RSS)
_DEFERRED_LIBRARIES = ("urllib3",)
#: ``client.api_client`` does ``from dateutil.parser import parse`` for models'
#: dates, which the agent never deserializes (it decodes with msgspec): the
#: package is deferred and ``parse`` is a stand-in that loads it on first call (~0.8 MB)
_DEFERRED_FUNCTIONS = (("dateutil.parser", "parse"),)
#: ``client.api_client`` does ``from multiprocessing.pool import ThreadPool``
#: for ``async_req=True`` calls, which the agent never makes: the module (and
#: the ``multiprocessing`` package under it) is loaded on the first call (~1 MB)
_DEFERRED_MODULE_FUNCTIONS = (("multiprocessing.pool", "ThreadPool"),)


def _is_submodule(package: ModuleType, name: str) -> bool:
    for directory in getattr(package, "__path__", ()):
        if os.path.isfile(os.path.join(directory, name + ".py")) or os.path.isfile(
            os.path.join(directory, name, "__init__.py")
        ):
            return True
    return False


def _deferred_package(name: str) -> ModuleType:
    return _deferred(name, importlib.util.find_spec(name), package=True)


def _deferred(name: str, spec: Any, *, package: bool) -> ModuleType:
    if spec is None or spec.loader is None or (package and spec.submodule_search_locations is None):
        raise ImportError(f"cannot find {'package' if package else 'module'} {name}")
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr not in _PUBLIC_DUNDERS:
            raise AttributeError(attr)  # probes by tooling (inspect, pickle...)
        if _is_submodule(module, attr):
            return importlib.import_module(f"{name}.{attr}")
        # Anything else: run the real package __init__ now, in this module.
        del module.__dict__["__getattr__"]
        loader.exec_module(module)
        return getattr(module, attr)

    module.__dict__["__getattr__"] = __getattr__
    sys.modules[name] = module
    return module


def _deferred_function(module_name: str, attr: str, module: ModuleType | None = None) -> None:
    """``module_name`` deferred, with ``attr`` a function that runs the module's code on its first call."""
    module = module or _deferred_package(module_name)

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        if module.__dict__.get(attr) is stand_in:
            del module.__dict__[attr]  # the deferred __getattr__ now runs the real module
        return getattr(module, attr)(*args, **kwargs)

    module.__dict__[attr] = stand_in


def _deferred_submodule_function(module_name: str, attr: str) -> None:
    """``_deferred_function`` for a module (not a package) whose parent package is not imported either.

    ``find_spec("a.b")`` would import ``a``; the spec is found in ``a``'s
    directory instead, so ``a`` loads only with ``a.b``'s code.
    """
    parent_name, _, child = module_name.rpartition(".")
    parent = importlib.util.find_spec(parent_name)
    if parent is None or not parent.submodule_search_locations:
        return
    spec = importlib.machinery.PathFinder.find_spec(module_name, list(parent.submodule_search_locations))
    if spec is None:
        return
    _deferred_function(module_name, attr, _deferred(module_name, spec, package=False))


def import_kubernetes_asyncio() -> tuple[Any, Any, Any]:
    """Return ``(config package, Configuration class, ApiClient class)``, light."""
    if "kubernetes_asyncio" not in sys.modules:
        for name in _HEAVY_PACKAGES:
            _deferred_package(name)
        for name in _DEFERRED_LIBRARIES:
            if name not in sys.modules and importlib.util.find_spec(name) is not None:
                _deferred_package(name)
        for name, attr in _DEFERRED_FUNCTIONS:
            if name not in sys.modules and importlib.util.find_spec(name) is not None:
                _deferred_function(name, attr)
        for name, attr in _DEFERRED_MODULE_FUNCTIONS:
            if name not in sys.modules:
                _deferred_submodule_function(name, attr)
        client = sys.modules["kubernetes_asyncio.client"]
        # kube_config does `from kubernetes_asyncio.client import ApiClient, Configuration`
        client.Configuration = importlib.import_module(
            "kubernetes_asyncio.client.configuration"
        ).Configuration
        client.ApiClient = importlib.import_module("kubernetes_asyncio.client.api_client").ApiClient
    config = importlib.import_module("kubernetes_asyncio.config")
    client = sys.modules["kubernetes_asyncio.client"]
    return config, client.Configuration, client.ApiClient
