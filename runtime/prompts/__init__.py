"""Jinja2 prompt templates."""
