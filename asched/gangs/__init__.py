"""The gang engine: Coscheduling's host, whole-gang admission and placement, and the PodGroups' status."""
