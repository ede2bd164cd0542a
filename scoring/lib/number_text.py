"""Figures as the pages print them: never "-0.000" for a number that rounds to zero."""

from __future__ import annotations


def number_text(value, spec: str) -> str:
    """`format(value, spec)`, except that a figure which rounds to zero is never shown as "-0.000" (nor "-0"):
    the sign of a number too small to print says nothing."""
    text = format(value, spec)
    if text.startswith("-") and text[1:2].isdigit() and float(text.rstrip("%")) == 0:
        return text[1:]
    return text
