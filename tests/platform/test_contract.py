"""The scheduling contract's matcher follows Kubernetes' taint, toleration and affinity rules."""

from hypothesis import given
from hypothesis import strategies as st

from spotkube.clouds import parse_spec, plan_platform
from spotkube.platform import contract
from spotkube.platform.contract import Placement, PoolContract, Requirement, Taint, Toleration, judge, landing_pools


def pool(name: str, taints: tuple[Taint, ...] = (), labels: dict[str, str] | None = None,
         gpus: int = 0, accelerator: str | None = None) -> PoolContract:
    return PoolContract(name, "gpu" if gpus else "platform", "on-demand", accelerator, gpus,
                        labels or {}, taints)


# The examples from the Kubernetes docs page "Taints and Tolerations": node1 has key1=value1:NoSchedule.
KEY1 = Taint("key1", "value1", "NoSchedule")


def test_docs_equal_toleration_matches() -> None:
    assert Toleration("key1", "Equal", "value1", "NoSchedule").tolerates(KEY1)


def test_docs_exists_toleration_ignores_value() -> None:
    assert Toleration("key1", "Exists", effect="NoSchedule").tolerates(KEY1)


def test_docs_empty_key_with_exists_tolerates_everything() -> None:
    assert Toleration(operator="Exists").tolerates(KEY1)
    assert Toleration(operator="Exists").tolerates(Taint("other", "x", "NoExecute"))


def test_docs_empty_effect_matches_all_effects_of_the_key() -> None:
    toleration = Toleration("key1", "Exists")
    assert toleration.tolerates(KEY1)
    assert toleration.tolerates(Taint("key1", "value1", "NoExecute"))


def test_wrong_value_or_effect_does_not_tolerate() -> None:
    assert not Toleration("key1", "Equal", "value2", "NoSchedule").tolerates(KEY1)
    assert not Toleration("key1", "Equal", "value1", "NoExecute").tolerates(KEY1)
    assert not Toleration("key2", "Exists").tolerates(KEY1)


def test_docs_three_taints_one_untolerated_blocks_scheduling() -> None:
    # Docs: key1=value1:NoSchedule, key1=value1:NoExecute, key2=value2:NoSchedule; the pod
    # tolerates the first two only, so it cannot be scheduled onto the node.
    node = pool("n", (KEY1, Taint("key1", "value1", "NoExecute"), Taint("key2", "value2", "NoSchedule")))
    pod = Placement(tolerations=(Toleration("key1", "Equal", "value1", "NoSchedule"),
                                 Toleration("key1", "Equal", "value1", "NoExecute")))
    verdict = judge(pod, node)
    assert not verdict.fits
    assert "key2=value2:NoSchedule" in verdict.reason


def test_prefer_no_schedule_never_blocks() -> None:
    assert judge(Placement(), pool("n", (Taint("k", "v", "PreferNoSchedule"),))).fits


def test_node_selector_and_required_affinity() -> None:
    gpu_pool = pool("gpu", labels={"disktype": "ssd", "zone": "a"})
    assert judge(Placement(node_selector={"disktype": "ssd"}), gpu_pool).fits
    assert not judge(Placement(node_selector={"disktype": "hdd"}), gpu_pool).fits
    terms = ((contract.Requirement("zone", "In", ("b",)),), (contract.Requirement("disktype", "Exists"),))
    assert judge(Placement(required=terms), gpu_pool).fits, "terms are OR'ed"
    both = ((contract.Requirement("zone", "In", ("b",)), contract.Requirement("disktype", "Exists")),)
    assert not judge(Placement(required=both), gpu_pool).fits, "requirements in a term are AND'ed"


def test_operators_not_in_does_not_exist_gt_lt() -> None:
    labels = {"size": "8", "tier": "gold"}
    req = contract.Requirement
    assert req("tier", "NotIn", ("silver",)).matches(labels)
    assert req("missing", "NotIn", ("x",)).matches(labels)
    assert req("missing", "DoesNotExist").matches(labels)
    assert req("size", "Gt", ("4",)).matches(labels)
    assert not req("size", "Lt", ("4",)).matches(labels)
    assert not req("tier", "Gt", ("4",)).matches(labels)


def test_match_fields_is_reported_not_guessed() -> None:
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}
    verdict = judge(Placement.from_pod_spec(spec), pool("p"))
    assert not verdict.fits and "matchFields" in verdict.reason


def test_gpu_requests_must_fit_the_node() -> None:
    placement = Placement(gpus=2)
    assert not judge(placement, pool("one", gpus=1, accelerator="nvidia-l4")).fits
    assert judge(placement, pool("four", gpus=4, accelerator="nvidia-l4")).fits


def test_pod_spec_round_trip() -> None:
    placement = contract.spot_gpu("nvidia-l4", fallback_to_on_demand=True)
    spec = {"tolerations": placement.tolerations_k8s(), "affinity": placement.affinity_k8s(),
            "nodeSelector": dict(placement.node_selector),
            "containers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    assert Placement.from_pod_spec(spec) == placement


def test_taint_formats() -> None:
    assert str(contract.GPU_TAINT) == "nvidia.com/gpu=present:NoSchedule"
    assert Taint.parse("a=b:NoExecute") == Taint("a", "b", "NoExecute")


def _contracts(cloud: str, capacity: str, accelerator: str | None) -> PoolContract:
    taints = contract.pool_taints(cloud, "gpu" if accelerator else "platform", capacity, has_gpu=bool(accelerator))
    labels = {**contract.declared_labels(cloud, "p", "gpu" if accelerator else "platform", capacity, accelerator),
              **contract.cloud_added_labels(cloud, "p", capacity, accelerator)}
    return PoolContract("p", "gpu" if accelerator else "platform", capacity, accelerator,
                        1 if accelerator else 0, labels, taints)


CLOUD_CAPACITY = st.sampled_from([("aks", "spot"), ("aks", "on-demand"), ("gke", "spot"),
                                  ("gke", "preemptible"), ("gke", "on-demand")])
ACCELERATORS = st.sampled_from([None, "nvidia-tesla-t4", "nvidia-l4", "nvidia-a100-80gb"])


@given(CLOUD_CAPACITY, ACCELERATORS)
def test_property_on_demand_only_never_lands_on_spot_or_gpu(cloud_capacity: tuple[str, str],
                                                            accelerator: str | None) -> None:
    cloud, capacity = cloud_capacity
    fits = judge(contract.on_demand_only(), _contracts(cloud, capacity, accelerator)).fits
    assert fits == (capacity == "on-demand" and accelerator is None)


@given(CLOUD_CAPACITY, ACCELERATORS, ACCELERATORS)
def test_property_spot_gpu_lands_exactly_on_interruptible_pools_of_its_type(
    cloud_capacity: tuple[str, str], accelerator: str | None, wanted: str | None
) -> None:
    cloud, capacity = cloud_capacity
    target = _contracts(cloud, capacity, accelerator)
    strict = judge(contract.spot_gpu(wanted or "nvidia-tesla-t4"), target).fits
    assert strict == (capacity != "on-demand" and accelerator == (wanted or "nvidia-tesla-t4"))
    fallback = judge(contract.spot_gpu(wanted or "nvidia-tesla-t4", fallback_to_on_demand=True), target).fits
    assert fallback == (accelerator == (wanted or "nvidia-tesla-t4"))


def test_landing_pools_puts_preferred_spot_first() -> None:
    pools = [_contracts("aks", "on-demand", "nvidia-tesla-t4"), _contracts("aks", "spot", "nvidia-tesla-t4")]
    pools = [PoolContract(n, p.role, p.capacity, p.accelerator, p.gpu_count, p.labels, p.taints)
             for n, p in zip(("ondemand", "spot"), pools, strict=True)]
    placement = contract.spot_gpu("nvidia-tesla-t4", fallback_to_on_demand=True)
    assert landing_pools(placement, pools) == ["spot", "ondemand"]


def _pool(name: str, taints: tuple[Taint, ...] = (), zones: tuple[str, ...] = (), **labels: str) -> PoolContract:
    return PoolContract(name, "platform", "on-demand", None, 0,
                        {"kubernetes.io/os": "linux", **labels}, taints, zones)


def test_well_known_labels_let_real_pod_specs_place() -> None:
    """KFP's workflow-controller selects kubernetes.io/os: linux; a pool contract carries that label."""
    plan = plan_platform(parse_spec({"cloud": "aks", "environment": "dev", "region": "uksouth",
                                     "systemPool": {"zones": ["1", "2"]}}, "t"))
    system = plan.system_pool.contract
    assert system.labels["kubernetes.io/os"] == "linux"
    assert system.labels["kubernetes.io/arch"] == "amd64"
    assert system.labels["node.kubernetes.io/instance-type"] == "Standard_D4s_v3"
    assert system.labels["topology.kubernetes.io/region"] == "uksouth"
    assert system.zones == ("uksouth-1", "uksouth-2")
    selector = Placement.from_pod_spec({"nodeSelector": {"kubernetes.io/os": "linux"},
                                        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}]})
    assert judge(selector, system).fits


def test_a_zone_requirement_fits_a_pool_that_spans_that_zone() -> None:
    pool = _pool("p", zones=("uksouth-1", "uksouth-2"))
    in_zone = Placement(required=((Requirement("topology.kubernetes.io/zone", "In", ("uksouth-2",)),),))
    elsewhere = Placement(required=((Requirement("topology.kubernetes.io/zone", "In", ("uksouth-3",)),),))
    assert judge(in_zone, pool).fits
    assert not judge(elsewhere, pool).fits


def test_prefer_no_schedule_taints_rank_a_pool_lower_as_the_scheduler_does() -> None:
    soft = _pool("soft", taints=(Taint("dedicated", "ml", "PreferNoSchedule"),))
    clean = _pool("clean")
    assert landing_pools(Placement(), [soft, clean]) == ["clean", "soft"]
    tolerant = Placement(tolerations=(Toleration("dedicated", "Equal", "ml", "PreferNoSchedule"),))
    assert landing_pools(tolerant, [soft, clean]) == ["soft", "clean"], "tolerated: pools keep their order"
    # TaintToleration (weight 3) outweighs NodeAffinity (weight 2) after normalisation
    preferring_soft = Placement(preferred=((100, (Requirement("spotkube.io/pool", "In", ("soft",)),)),))
    soft_labelled = _pool("soft", taints=soft.taints, **{"spotkube.io/pool": "soft"})
    assert landing_pools(preferring_soft, [soft_labelled, clean]) == ["clean", "soft"]


def test_a_required_node_affinity_without_terms_matches_nothing() -> None:
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}
    verdict = judge(Placement.from_pod_spec(spec), _pool("p"))
    assert not verdict.fits and "no terms" in verdict.reason
    assert judge(Placement.from_pod_spec({}), _pool("p")).fits, "no required affinity at all matches every pool"


def test_a_pod_selecting_a_compute_class_tolerates_that_class_s_taint_only() -> None:
    """GKE's admission adds the selected class's toleration; another class's taint still keeps it off."""
    def class_pool(name: str, gpu_type: str) -> PoolContract:
        return pool(name, (contract.compute_class_taint(gpu_type),),
                    {contract.COMPUTE_CLASS_LABEL: contract.compute_class(gpu_type)})

    l4, a100 = class_pool("l4", "nvidia-l4"), class_pool("a100", "nvidia-tesla-a100")
    selecting = Placement(node_selector={contract.COMPUTE_CLASS_LABEL: "spotkube-nvidia-l4"})
    assert judge(selecting, l4).fits
    assert judge(Placement(), l4).reason == (
        "does not tolerate taint cloud.google.com/compute-class=spotkube-nvidia-l4:NoSchedule")
    assert judge(selecting, a100).reason == (
        "does not tolerate taint cloud.google.com/compute-class=spotkube-nvidia-tesla-a100:NoSchedule")
    assert contract.TOLERATE_COMPUTE_CLASS.tolerates(contract.compute_class_taint("nvidia-tesla-a100"))
