"""Command line: ``logagent run | validate | tap | top | --version``."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import structlog

from logagent import __version__
from logagent.observe import tap_cli, top_cli
from logagent.observe.logging import LEVELS, configure_logging

#: exit status for a bad config, as Vector uses (EX_CONFIG)
EXIT_CONFIG = 78
EXIT_RUNTIME = 1

log = structlog.get_logger("logagent")

#: subcommands that inspect a running agent (their own modules)
INSPECT_COMMANDS = {"tap": tap_cli.run, "top": top_cli.run}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logagent", description="Kubernetes log agent")
    parser.add_argument("--version", action="version", version=f"logagent {__version__}")
    parser.add_argument("--log-format", choices=("json", "console"), default="json", help="format of the agent's own logs (stderr)")
    parser.add_argument("--log-level", choices=LEVELS, default="info")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the pipeline")
    _config_arguments(run)
    run.add_argument("--once", action="store_true", help="read every discovered file to its end, deliver, exit")
    run.add_argument(
        "--watch-config",
        action="store_true",
        help="reload the config when a file changes (their directories are watched, so a ConfigMap update is seen); "
        "SIGHUP always reloads (every file is read again)",
    )
    validate = commands.add_parser("validate", help="check the config and the graph, exit 0 if valid, 78 if not")
    _config_arguments(validate)
    tap_cli.add_parser(commands)
    top_cli.add_parser(commands)
    for sub in (run, validate, *(commands.choices[name] for name in INSPECT_COMMANDS)):
        sub.add_argument("--log-format", choices=("json", "console"), default=argparse.SUPPRESS)
        sub.add_argument("--log-level", choices=LEVELS, default=argparse.SUPPRESS)
    return parser


def _config_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config", "-c", action="append", default=[], metavar="FILE",
        help="a config file, YAML, TOML or JSON by its extension (.yaml/.yml, .toml, .json); repeat to merge several",
    )
    command.add_argument(
        "--config-dir", "-C", action="append", default=[], metavar="DIR",
        help="a directory of config files, merged as Vector does (also its sources/, transforms/, sinks/ subdirectories)",
    )


def _config_names(args: argparse.Namespace) -> str:
    return ", ".join([*args.config, *args.config_dir])


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in ("run", "validate") and not (args.config or args.config_dir):
        parser.error(f"{args.command}: give --config FILE or --config-dir DIR")
    configure_logging(args.log_format, args.log_level)
    if args.command in INSPECT_COMMANDS:  # they talk to a running agent: no config of their own to check
        return INSPECT_COMMANDS[args.command](args)
    from logagent.config import ConfigError, load_config
    from logagent.graph import check_config

    names = _config_names(args)
    try:
        config = load_config(args.config, config_dirs=args.config_dir)
        warnings = check_config(config)
    except ConfigError as exc:
        if args.command == "validate":
            lines = "\n  ".join(str(e) for e in exc.errors)
            count = len(exc.errors)
            print(f"invalid config {names} ({count} error{'s' if count > 1 else ''}):\n  {lines}", file=sys.stderr)
        else:
            log.error("invalid config", config=names, error=str(exc), errors=[str(e) for e in exc.errors])
        return EXIT_CONFIG
    if args.command == "validate":
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
        print(f"config {names} is valid", file=sys.stderr)
        return 0
    for warning in warnings:
        log.warning("config warning", warning=warning)
    return asyncio.run(_run(config, once=args.once, config_paths=args.config, config_dirs=args.config_dir,
                            watch_config=args.watch_config))


async def _run(config: object, *, once: bool, config_paths: list[str], config_dirs: list[str] | None = None,
               watch_config: bool = False) -> int:
    from logagent.config import ConfigError
    from logagent.kube.client import KubeConfigError
    from logagent.kube.snapshot import SnapshotError
    from logagent.sinks.console import SinkClosed
    from logagent.sinks.healthcheck import Unhealthy
    from logagent.topology import Topology

    topology = Topology(config)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, topology.request_stop)
    if not once:
        from logagent.reloader import ConfigReloader

        reloader = ConfigReloader(config_paths, topology, watch=watch_config, config_dirs=config_dirs or ())
        topology.companions.append(reloader.run)
        loop.add_signal_handler(signal.SIGHUP, reloader.request)
    api_server = None
    if config.api.enabled:  # type: ignore[attr-defined]
        from logagent.observe.health import start_api_server

        address = config.api.address  # type: ignore[attr-defined]
        try:
            api_server = await start_api_server(
                topology, address, tap_token_file=config.api.tap_token_file, data_dir=config.data_dir  # type: ignore[attr-defined]
            )
        except OSError as exc:
            log.error("cannot listen for the health and metrics API", address=address, error=str(exc))
            return EXIT_RUNTIME
        log.info("health and metrics API listening", url=api_server.url, socket=api_server.socket)
    try:
        await topology.run(once=once)
    except (KubeConfigError, SnapshotError) as exc:
        log.error("invalid kubernetes configuration", error=str(exc))
        return EXIT_CONFIG
    except ConfigError as exc:
        log.error("invalid config", error=str(exc))
        return EXIT_CONFIG
    except Unhealthy as exc:  # Vector stops the start with its config status too
        log.error("sinks unhealthy; not starting", error=str(exc))
        return EXIT_CONFIG
    except SinkClosed:
        return EXIT_RUNTIME
    except Exception:
        log.exception("agent failed")
        return EXIT_RUNTIME
    finally:
        if api_server is not None:
            await api_server.stop()
    return 0
