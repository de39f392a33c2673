"""The code behind the generated-code API: what compiled skill modules and rules call, through
the faces `skillc.runtime.support` and `skillc.runtime.cel` (generated code imports only
those two; the runtime imports these modules directly). `skillmeta` the records generated
modules fill, `paths` path tuples, `values` MISSING / canonical / §6.1 ops, `textpattern` the
`MATCHES` engine, `cel_values` / `cel_logic` / `cel_time` / `cel_text` CEL's values and
operators, `loader` a compiled studio loaded.
"""
