"""Prince (1978)'s own examples of tacit assumptions, both directions (Weir et al. 2020, Fig. 4):
is "person" named from her properties of a person, and are her properties of a country what
the model says a country has? No norms needed; the answers are ranked among the shared
vocabulary."""
