"""Jinja2 templates of generated validator modules."""
