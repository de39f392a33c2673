"""Deploy time: loader, chain, gate, evidence, builtins, node, planner, store, MCP, models, trace."""
