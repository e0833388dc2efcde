"""PreferCheaperNodes: an asched Score plugin that prefers cheaper nodes.

A node's hourly price comes from one of its labels (``priceLabel``, a decimal such as
``"0.096"``), or, when it has none, from a price list keyed by another label
(``instanceTypeLabel``, by default ``node.kubernetes.io/instance-type``), or else
``defaultPrice``. Among the nodes taking part, the cheapest scores 100 and the dearest
0, linearly in between; when they all cost the same, every node scores 100.

The score reads nothing of the pod, so every pod shares the cached scores (``sign``
returns the same fragment for all pods) and each node is priced only when it changes.

Configuration::

    profiles:
    - schedulerName: cost-aware
      plugins:
        multiPoint:
          enabled:
          - name: PreferCheaperNodes
            weight: 3
      pluginConfig:
      - name: PreferCheaperNodes
        args:
          priceLabel: example.com/price-per-hour
          instanceTypePrices: {m5.large: "0.096", m5.xlarge: "0.192"}
          defaultPrice: "1.0"
"""

from __future__ import annotations

from asched_price_score.plugin import PLUGIN, PreferCheaperNodes, PriceArgs

__all__ = ["PLUGIN", "PreferCheaperNodes", "PriceArgs"]
