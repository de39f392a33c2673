"""The faces of `skillc replay`: its report as terminal text, Markdown or one HTML file, and the
progress bar. The judging itself is the runtime's (skillc.runtime.replay)."""
from __future__ import annotations
