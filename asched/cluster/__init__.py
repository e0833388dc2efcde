"""The cluster model: quantities, decoded pod and node records, the columnar NodeTable."""
