"""Build time: studio sources -> parse -> typed IR -> validate -> codegen -> graph templates."""
