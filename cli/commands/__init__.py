"""One module per `skillc` sub-command: HELP, configure(parser), run(args) -> int."""
