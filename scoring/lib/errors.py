"""Errors for bad input files: they say which file, which line, and what is wrong."""


class InputError(ValueError):
    """A malformed input. `line` is 1-based; None when the problem is not tied to one line."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")
