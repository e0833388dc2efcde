"""Benchmarks: the core decision benchmark and scheduler_perf-style workloads."""
