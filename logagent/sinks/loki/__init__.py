"""The `loki` sink: the push protocol and its config."""
