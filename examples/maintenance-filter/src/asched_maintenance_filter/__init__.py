"""Two asched plugins: Maintenance (a Filter) and ZoneWeights (a Score).

**Maintenance** keeps pods off nodes in maintenance: a node annotated
``example.com/maintenance: "true"`` is rejected (UnschedulableAndUnresolvable: preemption
cannot help), unless the pod is annotated ``example.com/ignore-maintenance: "true"``. It
reads annotations, so its declaration says ``reads_annotations=True``; a pod it rejected
moves again when a node's annotations change (``NodeAnnotationChange``) or a node is
added, if that node is not in maintenance (its queueing hint).

**ZoneWeights** scores each node with its zone's weight (0..100) from ``zoneWeights``, a
map whose keys are the user's zones, read with ``ArgsSection.integer_map``.

Configuration::

    profiles:
    - schedulerName: careful
      plugins:
        multiPoint:
          enabled:
          - name: Maintenance
          - name: ZoneWeights
            weight: 5
      pluginConfig:
      - name: Maintenance
        args:
          nodeAnnotation: example.com/maintenance
          podAnnotation: example.com/ignore-maintenance
      - name: ZoneWeights
        args:
          zoneWeights: {zone-a: 100, zone-b: 50}
          defaultWeight: 0
"""

from __future__ import annotations

from asched_maintenance_filter.plugin import (
    MAINTENANCE,
    ZONE_WEIGHTS,
    Maintenance,
    MaintenanceArgs,
    ZoneArgs,
    ZoneWeights,
)

__all__ = [
    "MAINTENANCE",
    "ZONE_WEIGHTS",
    "Maintenance",
    "MaintenanceArgs",
    "ZoneArgs",
    "ZoneWeights",
]
