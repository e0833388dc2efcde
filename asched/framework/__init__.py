"""The scheduling framework: extension points, status codes, the runtime and its plugins."""
