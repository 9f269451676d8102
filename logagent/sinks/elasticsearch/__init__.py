"""The `elasticsearch` sink: the `_bulk` protocol, its config, the endpoint pool."""
