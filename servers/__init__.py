"""PROVE's MCP servers (import name `prove_servers`); each subpackage exports `SERVER`. See README.md."""

import prove.env  # noqa: E402, F401  (prove.env adds the PROVE_SERVER_PATH folders to this package's path)
