"""PROVE's MCP servers (import name `prove_servers`); each subpackage exports `SERVER`. See README.md."""
