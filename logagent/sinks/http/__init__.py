"""The HTTP machinery every HTTP-based sink shares: client, config, batching, compression, delivery and retries, auth, TLS, the dead-letter file."""
