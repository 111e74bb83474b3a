"""GKE's own NVIDIA device plugin: GKE runs it on every GPU node, so spotkube deploys none.

NVIDIA's DaemonSet beside it would advertise each GPU twice; the plan still checks that every GPU
pool has exactly one plugin, with GKE's serving the nodes the contract's labels say it serves.
"""

from __future__ import annotations

from spotkube.clouds.gke.labels import default_device_plugin_serves
from spotkube.platform.addons.device_plugin import NAMESPACE, ManagedDevicePlugin

#: The DaemonSet GKE runs on its GPU nodes (in kube-system), named in messages.
PLUGIN_NAME = "nvidia-gpu-device-plugin"

MANAGED_PLUGIN = ManagedDevicePlugin(
    name=PLUGIN_NAME,
    note=(f"GKE runs its own NVIDIA device plugin ({PLUGIN_NAME} in {NAMESPACE}) on every GPU node and installs "
          "the driver on managed-driver pools; spotkube deploys no second plugin, which would advertise each GPU "
          "twice."),
    summary="GKE's managed plugin (spotkube deploys none)",
    serves=default_device_plugin_serves,
)
