"""The relay's destinations, one module per kind behind relay.transport's one protocol."""
