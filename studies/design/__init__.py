"""A study's design: the Latin square, the study services with the design-lock rule, selectors, pages."""
