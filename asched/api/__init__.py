"""The I/O seam to the Kubernetes API (kubernetes-asyncio, raw JSON only)."""
