"""GPUPacking: keep GPU nodes whole for the jobs that need whole nodes.

A cluster of 8-GPU nodes serves both 8-GPU training jobs and 1- or 2-GPU notebooks and
inference pods. Spread the small pods by free capacity, as the default scoring does, and
soon every node has a few GPUs taken: no node has 8 free, and the training job stays
pending with 60 GPUs idle. GPUPacking prevents that:

* **Filter**: a pod that requests no GPU is kept off nodes that have GPUs (when
  ``reserveGPUNodes``, the default), so CPU work cannot strand GPUs. Reason:
  ``node(s) reserve their GPUs for GPU pods``.
* **Score**: a GPU pod prefers the node it fills best: the fewer GPUs the node has free
  after placing it, relative to its total, the higher the score
  (``100 * (1 - free_after / allocatable)``). Small pods stack on partly used nodes and
  whole nodes stay whole for the jobs that need them. Pods without GPUs are not scored
  (PreScore Skip).

Args (``GPUPackingArgs``): ``resourceName`` (``nvidia.com/gpu``), ``reserveGPUNodes``
(true).
"""

from __future__ import annotations

from asched_gpu_packing.plugin import PLUGIN, GPUPacking, PackingArgs

__all__ = ["PLUGIN", "GPUPacking", "PackingArgs"]
