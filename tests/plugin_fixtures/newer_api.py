"""A plugin built for a newer plugin API: importing it fails with the versions named."""

from __future__ import annotations

from asched import plugin as ap


class FromTheFuture:
    name = "FromTheFuture"

    def pre_enqueue(self, pod: ap.PodInfo) -> ap.Status:
        return ap.Status.success()


PLUGIN = ap.declare(FromTheFuture, api_version="2.0")
