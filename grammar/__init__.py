"""Lark grammars of the skill contract text and its expressions."""
