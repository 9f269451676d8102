"""logagent: a per-node Kubernetes log agent."""

__version__ = "0.1.0"
