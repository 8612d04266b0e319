"""Simulated hosts: one Linux network namespace per node, joined by a bridge, each node's link shaped with
`tc tbf` to a set rate in both directions, so multi-node runs on one machine go through a link of known speed.

Parent side only (no TensorFlow). Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and the `ip`, `tc` and `nsenter`
tools. Link rates are parsed by `tfscale.suite.linkrate` (pure, below the suite loader).
"""
