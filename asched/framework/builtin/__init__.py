"""The default plugins, one module each, vectorised over all rows of the NodeTable."""
