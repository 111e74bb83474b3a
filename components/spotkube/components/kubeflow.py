"""`KubeflowPipelines`: Kubeflow Pipelines standalone, on the platform pool, with its own credentials.

A thin shell: KFP's kustomize manifests are installed in their two documented steps, changed by the pure
functions of `platform.addons.kfp_transforms`. Transforms (not the older `transformations`) run in the
engine, so they reach the objects that `kustomize.v2.Directory` renders inside the provider.
"""

import pulumi
import pulumi_random as random
from pulumi_kubernetes.kustomize.v2 import Directory

from spotkube.clouds import profile
from spotkube.components.args import KubeflowPipelinesArgs
from spotkube.platform.addons import kfp_transforms
from spotkube.platform.addons.kfp_transforms import Credentials
from spotkube.platform.spec import KubeflowSettings, PlatformSpec
from spotkube.platform.warnings import tagged
from spotkube.shell.common import (
    addon_settings,
    built_from,
    child,
    deployed_onto,
    enabled_refusal,
    props_transform,
    refuse_disabled,
    validated,
)

#: The retry args of spotkube 0.1, refused with what replaced them.
RETRY_REFUSAL = ("was replaced by eviction_retry_limit (retries of a step a node took away, default 10) and "
                 "failure_retry_limit (retries of a step that failed on its own, default 1); a retry_limit of N "
                 "becomes eviction_retry_limit=N (docs/evictions.md#migrating-from-retrypolicy-and-retrylimit)")
REFUSED = {"enabled": enabled_refusal("Kubeflow Pipelines", "kubeflow"), "retry_policy": RETRY_REFUSAL,
           "retry_limit": RETRY_REFUSAL}


def _kfp_transform(settings: KubeflowSettings, credentials: Credentials,
                   cloud_logs_link: bool = False) -> pulumi.ResourceTransform:
    return props_transform(lambda props: kfp_transforms.transform(props, settings, credentials,
                                                                  cloud_logs_link=cloud_logs_link))


class KubeflowPipelines(pulumi.ComponentResource):
    """Kubeflow Pipelines standalone, placed by the scheduling contract and ready for spot steps.

    Its Deployments and StatefulSets only land on nodes labelled as the platform pool (role platform,
    on-demand, no GPU), so the cluster needs one; the plan reports any that could land nowhere.

    Deploy it through the cluster's provider: `opts=pulumi.ResourceOptions(providers=[cluster.provider])`.
    Installing needs `git` where Pulumi runs, because kustomize fetches the manifests.

    `enabled` is refused rather than honoured: a component that installed nothing would still export
    a namespace, a UI service and generated keys for a Kubeflow that isn't there, and every consumer
    of those outputs would be misled. Not creating the component says so plainly.

    What it registers: three generated passwords (the artifact store's keys and MySQL's root
    password) and KFP's upstream manifests at `version` (cluster-scoped first, then the rest),
    rewritten to land on the platform pool, retry spot evictions and use the generated passwords.

    Its args are `KubeflowPipelinesArgs`: `version`, `repository`, `expose_ui`, `ui_source_ranges`
    and the others in docs/configuration.md; each has a default.

    Outputs. The names resolve at once (they are fixed); the keys once they are generated, before the
    manifests that use them are applied.

    - `namespace`: the namespace KFP runs in, `kubeflow`.
    - `ui_service`: the UI's Service; reach it with `kubectl port-forward`.
    - `object_store_access_key`: the artifact store's generated access key, a secret.
    - `object_store_secret_key`: its generated secret key, a secret.
    """

    namespace: pulumi.Output[str]
    """The namespace KFP runs in."""
    ui_service: pulumi.Output[str]
    """The UI's Service; reach it with `kubectl port-forward -n kubeflow svc/ml-pipeline-ui 8080:80`."""
    object_store_access_key: pulumi.Output[str]
    """Generated access key of the artifact store (a secret)."""
    object_store_secret_key: pulumi.Output[str]
    """Generated secret key of the artifact store (a secret)."""

    def __init__(
        self, name: str, args: KubeflowPipelinesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Kubeflow Pipelines through the provider in `opts`.

        :param name: the component's name; its children's names start with it.
        :param args: `KubeflowPipelinesArgs` (`{}` takes every default); bad args end the program
            with one line naming the key.
        :param opts: Pulumi's resource options: `providers=[cluster.provider]`.
        """
        source = f"KubeflowPipelines {name!r} args"

        def settings() -> KubeflowSettings:
            return addon_settings(args, KubeflowPipelinesArgs, KubeflowSettings, source, refused=REFUSED)
        self._build(name, (validated(settings), False), opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "KubeflowPipelines":
        """The stack's Kubeflow Pipelines, from a spec `parse_spec` has already accepted."""
        def settings() -> KubeflowSettings:
            refuse_disabled(f"KubeflowPipelines {name!r}", "kubeflow.enabled", spec.kubeflow.enabled,
                            "Kubeflow Pipelines")
            return spec.kubeflow
        # The run page links a step to the cloud's logs only where KFP's lookup works (GKE).
        return built_from(cls, name, (validated(settings), profile(spec.cloud).kfp_cloud_logs_link), opts)

    def _build(self, name: str, built: tuple[KubeflowSettings, bool], opts: pulumi.ResourceOptions | None) -> None:
        """`built` is the checked settings and whether the UI links steps to the cloud's logs (known
        from a stack's cloud; the Python args name no cloud, so they get no link)."""
        settings, cloud_logs_link = built
        super().__init__(kfp_transforms.KUBEFLOW_TYPE, name, {}, opts)
        deployed_onto(opts, "kubeflow", settings, self)

        # Fixed names and no keepers: generated once, then stable for the life of the stack.
        passwords = [
            random.RandomPassword(f"{name}-object-store-access-key", length=20, special=False, opts=child(self)),
            random.RandomPassword(f"{name}-object-store-secret-key", length=40, special=False, opts=child(self)),
            random.RandomPassword(f"{name}-mysql-root-password", length=32, special=False, opts=child(self)),
        ]
        access_key, secret_key, mysql_password = (pulumi.Output.secret(p.result) for p in passwords)
        credentials = Credentials(access_key, secret_key, mysql_password)
        transforms = [_kfp_transform(settings, credentials, cloud_logs_link)]

        def url(path: str) -> str:
            return kfp_transforms.manifest_url(settings.repository, path, settings.version)

        cluster_scoped = Directory(
            f"{name}-cluster-scoped", directory=url(kfp_transforms.CLUSTER_SCOPED_PATH),
            opts=child(self, transforms=transforms),
        )
        Directory(
            f"{name}-platform-agnostic", directory=url(kfp_transforms.PLATFORM_AGNOSTIC_PATH),
            opts=child(self, depends_on=[cluster_scoped, *passwords], transforms=transforms),
        )
        if settings.expose_ui:
            reach = ("only from " + ", ".join(settings.ui_source_ranges) if settings.ui_source_ranges
                     else "from the whole internet (set kubeflow.uiSourceRanges to narrow it)")
            pulumi.log.warn(tagged(
                "kubeflow-ui-public",
                f"{name}: kubeflow.exposeUi gives the Kubeflow Pipelines UI a public LoadBalancer, reachable "
                f"{reach}; KFP standalone has no login, so whoever reaches it can run pipelines. "
                f"`{kfp_transforms.UI_PORT_FORWARD}` needs no exposure."
            ))

        self.namespace = pulumi.Output.from_input(kfp_transforms.NAMESPACE)
        self.ui_service = pulumi.Output.from_input(kfp_transforms.UI_SERVICE)
        self.object_store_access_key = access_key
        self.object_store_secret_key = secret_key
        self.register_outputs({
            "namespace": self.namespace,
            "uiService": self.ui_service,
            "objectStoreAccessKey": self.object_store_access_key,
            "objectStoreSecretKey": self.object_store_secret_key,
        })
