"""HTTP: routes, request parsing and responses. The only layer that imports the web framework."""
