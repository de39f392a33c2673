"""The names a rule may use (docs/reference/rules.md): its roots and the scope attribute each
reads, the evidence namespaces, the CEL functions and methods with the `skillc.runtime.cel` helper
each compiles to, and the timestamp parts. One leaf read by the code generator (codegen_rules), the
checker (rules_check) and the front end (rules_front), so none imports another for a table."""
from __future__ import annotations

# The names a rule sees, and the scope attribute each one reads.
ROOTS: dict[str, str] = {"args": "r.args", "platform": "r.platform", "shared": "r.shared", "inputs": "r.inputs",
                         "now": "r.now"}
NAMESPACES = ("evidence", "latest")

CEL_FUNCTIONS = {"size": "cel.size", "int": "cel.to_int", "double": "cel.to_double", "string": "cel.to_string",
                 "bool": "cel.to_bool", "dyn": "cel.dyn", "timestamp": "cel.timestamp", "duration": "cel.duration",
                 "decimal": "cel.to_decimal", "sum": "cel.sum_", "min": "cel.min_", "max": "cel.max_",
                 "matches": "cel.matches"}
CEL_METHODS = {"size": "cel.size", "contains": "cel.contains", "startsWith": "cel.starts_with",
               "endsWith": "cel.ends_with", "matches": "cel.matches", "lowerAscii": "cel.lower_ascii",
               "upperAscii": "cel.upper_ascii", "trim": "cel.trim"}
TIME_PARTS = ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
              "getMinutes", "getSeconds", "getMilliseconds")
